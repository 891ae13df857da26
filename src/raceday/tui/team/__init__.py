"""The team session's screens: a seat's play screen, the projector view, the facilitator's
console, and the doors the CLI opens to them."""
