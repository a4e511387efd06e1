"""One module per format: the structure of an assistant turn, as grammar rules."""
