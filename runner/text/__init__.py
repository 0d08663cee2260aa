"""Text helpers every layer compares texts with: words, stop words and stems (`words`), and the
one rule for an author's regular expressions (`patterns`)."""
