"""The Team menu: disagreements, their detail and the dialog that settles them."""
