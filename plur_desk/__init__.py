"""plur_desk: a desktop review console for PLUR memory stores."""

__version__ = "0.1.0"
APP_ID = "dev.plurdesk.PlurDesk"
RUNTIME_NAME = "plur-desk"
