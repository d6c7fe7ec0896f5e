"""The Drafts pane, its detail and its controller: deciding on drafts."""
