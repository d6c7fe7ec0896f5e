"""Screenshot of the real window on a 1280x720 screen with emoji and symbols in stored text.

xvfb-run -a -s "-screen 0 1280x720x24" python docs/make_small_screen_shot.py docs/screenshots/small-screen.png
"""

import shutil
import sys
import tempfile
import time
from pathlib import Path

from plur_desk.app.demo import demo_source
from plur_desk.app.settings import Settings, SettingsStore
from plur_desk.ui.app import make_application
from plur_desk.ui.main_window import MainWindow

tmp = Path(tempfile.mkdtemp())
store = tmp / "store"
shutil.copytree(demo_source(), store)
text = (store / "engrams.yaml").read_text()
first = text.index("statement: Run `make test-fast`")
end = text.index("\n", first)
text = text[:first] + 'statement: "⛔ Never deploy on Fridays 🚀 — même la nuit ✔ → ⚠"' + text[end:]
(store / "engrams.yaml").write_text(text)
app = make_application()
win = MainWindow(SettingsStore(tmp / "settings.yaml"), Settings(reviewer_name="Ada"), "Ada")
win.show()
win.open_path(store)
deadline = time.time() + 30
while (win.session is None or win.jobs.pending()) and time.time() < deadline:
    app.processEvents()
    time.sleep(0.02)
for _ in range(50):
    app.processEvents()
    time.sleep(0.02)
print("window", win.width(), win.height(), "screen", win.screen().availableGeometry())
win.grab().save(sys.argv[1])
win.close()
