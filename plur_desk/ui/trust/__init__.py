"""The reviewer's signing key in the window, and the journal records no trusted key verifies."""
