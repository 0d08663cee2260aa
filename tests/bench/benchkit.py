"""What the benchmark harness's smoke tests share: a tiny docs folder and two scripted questions.

(No `__init__.py` here: it would make this folder a package named `bench`, hiding the real one.)
"""

from __future__ import annotations

from bench.questions import HOWTO, LIBRARY, REFERENCE, TUTORIAL
from bench.simllm import Part

# a few pages per docs folder, each about what one scripted part asks
DOCS = {
    "library/io.rst.txt": "io module\n=========\n\nText files are decoded with an encoding. "
    "The default encoding is locale dependent.\n",
    "library/functools.rst.txt": "functools\n=========\n\nThe cmp_to_key function turns an old "
    "comparison function into a key function.\n",
    "tutorial/inputoutput.rst.txt": "Reading files\n=============\n\nTo read a file line by "
    "line, loop over the file object.\n",
    "reference/compound.rst.txt": "The with statement\n==================\n\nThe with statement "
    "wraps a block with methods of a context manager.\n",
    "howto/sorting.rst.txt": "Sorting HOWTO\n=============\n\nSort with a key function: the "
    "key function is called once per element.\n",
    "faq/design.rst.txt": "Design FAQ\n==========\n\nSelf must be explicit in methods because "
    "methods are plain functions.\n",
}

QUESTIONS = {
    "How does the tutorial read a file line by line, and which encoding does io use?": (
        Part(TUTORIAL, "How do I read a file line by line?"),
        Part(LIBRARY, "Which encoding does the io module use for text files?"),
    ),
    "What does the with statement do, how do I sort with a key function, and what does "
    "cmp_to_key do?": (
        Part(REFERENCE, "What does the with statement do?"),
        Part(HOWTO, "How do I sort with a key function?"),
        Part(LIBRARY, "What does functools.cmp_to_key do?"),
    ),
}
