"""What each action in ACTIONS does: the window's map of every action to the controller method that handles it
(checked against the table when the actions are built, ui/actions.py)."""

from __future__ import annotations

from functools import partial
from typing import Protocol

from plur_desk.ui.actions import Handlers
from plur_desk.ui.changes.changes_controller import ChangesController
from plur_desk.ui.common import theme
from plur_desk.ui.history.history_pane import HistoryPane
from plur_desk.ui.messages import Messages
from plur_desk.ui.navigation import NavigationController
from plur_desk.ui.review.drafts_pane import DraftsPane
from plur_desk.ui.review.review_controller import ReviewController
from plur_desk.ui.review.session_drafts import on_session
from plur_desk.ui.scale.scale_support import ScaleController
from plur_desk.ui.store_opening import StoreController
from plur_desk.ui.team.team_controller import TeamController
from plur_desk.ui.tensions.conflicts_support import ConflictsController
from plur_desk.ui.tensions.tensions_controller import TensionsController
from plur_desk.ui.trust.reviewer_identity import IdentityController
from plur_desk.ui.validity.validity_controller import ValidityController
from plur_desk.ui.workspace import Workspace


class Parts(Protocol):
    """What of the window the map reaches: its controllers, and the panes whose methods are actions."""

    workspace: Workspace
    messages: Messages
    opener: StoreController
    identity: IdentityController
    navigation: NavigationController
    review: ReviewController
    scale: ScaleController
    conflicts: ConflictsController
    tension_review: TensionsController
    validity_review: ValidityController
    changes_review: ChangesController
    team: TeamController
    drafts: DraftsPane
    history: HistoryPane

    def close(self) -> bool: ...


def action_map(w: Parts) -> Handlers:
    nav, review, scale = w.navigation, w.review, w.scale
    tensions, validity, history = w.tension_review, w.validity_review, w.history
    return {
        "file.open": w.opener.open_store_dialog,
        "file.demo": w.opener.open_demo,
        "file.reload": w.opener.reload,
        "file.identity": w.identity.show_reviewer_identity,
        "file.quit": w.close,
        "edit.undo": review.undo,
        "edit.redo": review.redo,
        "edit.find": nav.focus_search,
        "edit.palette": nav.show_palette,
        "view.drafts": nav.show_drafts,
        "view.tensions": nav.show_tensions,
        "view.validity": nav.show_validity,
        "view.history": nav.show_history,
        "view.conflicts": nav.show_conflicts,
        "view.clusters": nav.show_clusters,
        "view.writers": nav.show_writers,
        **w.changes_review.handlers(),
        "view.theme": partial(theme.cycle, w.workspace, w.workspace.reshow),
        "review.approve": review.approve_selected,
        "review.approve_level": review.approve_selected_level,
        "review.reject": review.reject_selected,
        "review.edit": review.edit_selected,
        "review.skip": review.skip,
        "review.approve_session": on_session(w.drafts, w.messages, review.approve_selected),
        "review.reject_session": on_session(w.drafts, w.messages, review.reject_selected),
        "review.next": review.select_next,
        "review.previous": review.select_previous,
        "review.risk_order": scale.toggle_risk_order,
        "clusters.settle": scale.settle_cluster,
        "clusters.keep_member": scale.settle_cluster_keeping_member,
        "clusters.split": scale.split_cluster,
        "tension.confirm": tensions.confirm_tension,
        "tension.dismiss": tensions.dismiss_tension,
        "tension.keep_left": tensions.keep_left,
        "tension.keep_right": tensions.keep_right,
        "tension.split": tensions.split_tension,
        "validity.edit": validity.edit_validity,
        "validity.open": nav.open_validity_of_current,
        "validity.expire": validity.expire_now,
        "history.export_csv": history.export_csv,
        "history.export_jsonl": history.export_jsonl,
        "history.timeline": nav.show_timeline,
        "team.disagreements": w.team.show_team,
        "team.sync": w.team.sync_team,
        "help.shortcuts": nav.show_shortcuts,
        "help.about": nav.show_about,
    }
