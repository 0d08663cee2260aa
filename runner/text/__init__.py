"""Text helpers every layer compares texts with: words, stop words and stems (`words`), the
one rule for an author's regular expressions (`patterns`), and what looks like a credential
(`credentials`: hidden in whatever leaves runner)."""
