import pytest

from plur_desk.domain.review import Reviewer  # noqa: F401

from support.stores import copy_store, make_plur_store


@pytest.fixture(scope="session")
def store_template(tmp_path_factory):
    return make_plur_store(tmp_path_factory.mktemp("plur-templates"))


@pytest.fixture
def store(store_template, tmp_path):
    return copy_store(store_template, tmp_path / "store")


@pytest.fixture
def node_home(tmp_path):
    return tmp_path / "node-home"
