"""Twenty multi-part questions about Python (ten of two parts, ten of three) and the part of the
docs that answers each part: the simulated LLM's script, the same for runner and LlamaIndex.

The tools are named after the four parts of `../shared/data/pydocs/docs` they search: the
library reference, the tutorial, the language reference, and the HOWTOs with the FAQ.
"""

from __future__ import annotations

from bench.simllm import Part

LIBRARY = "library_docs"
TUTORIAL = "tutorial_docs"
REFERENCE = "reference_docs"
HOWTO = "howto_docs"

# tool -> (the docs folders it searches, its description for LlamaIndex's question generator)
TOOLS: dict[str, tuple[tuple[str, ...], str]] = {
    LIBRARY: (("library",), "The Python standard library reference: modules, classes, functions."),
    TUTORIAL: (("tutorial",), "The Python tutorial: an informal introduction to the language."),
    REFERENCE: (("reference",), "The Python language reference: syntax and semantics."),
    HOWTO: (("howto", "faq"), "The Python HOWTOs and the FAQ: topic guides and common questions."),
}

_QUESTIONS: list[tuple[str, list[tuple[str, str]]]] = [
    # --- two parts ---------------------------------------------------------------------------
    (
        "How does the tutorial show reading a file line by line, and what does the io module "
        "say about the encoding of text files?",
        [
            (TUTORIAL, "How do I read a file line by line?"),
            (LIBRARY, "What does the io module say about the encoding of text files?"),
        ],
    ),
    (
        "What does the language reference say about the with statement, and how does "
        "contextlib.contextmanager build a context manager?",
        [
            (REFERENCE, "How is the with statement executed?"),
            (LIBRARY, "How does contextlib.contextmanager build a context manager?"),
        ],
    ),
    (
        "How does the logging HOWTO suggest configuring loggers, and which handlers does the "
        "logging.handlers module provide?",
        [
            (HOWTO, "How should loggers be configured?"),
            (LIBRARY, "Which handlers does the logging.handlers module provide?"),
        ],
    ),
    (
        "How does the tutorial explain list comprehensions, and how does the language reference "
        "define displays for lists and comprehensions?",
        [
            (TUTORIAL, "How do list comprehensions work?"),
            (REFERENCE, "How are list displays and comprehensions defined?"),
        ],
    ),
    (
        "Why must self be used explicitly in methods according to the FAQ, and how does the data "
        "model describe instance methods?",
        [
            (HOWTO, "Why must self be used explicitly in method definitions and calls?"),
            (REFERENCE, "How does the data model describe instance method objects?"),
        ],
    ),
    (
        "How do I sort with a key function according to the sorting HOWTO, and what does "
        "functools.cmp_to_key do?",
        [
            (HOWTO, "How do I sort with a key function?"),
            (LIBRARY, "What does functools.cmp_to_key do?"),
        ],
    ),
    (
        "How does the tutorial introduce handling exceptions, and how is the try statement "
        "specified in the language reference?",
        [
            (TUTORIAL, "How are exceptions handled with try and except?"),
            (REFERENCE, "How is the try statement specified?"),
        ],
    ),
    (
        "How are regular expressions compiled according to the regex HOWTO, and which flags does "
        "the re module define?",
        [
            (HOWTO, "How are regular expressions compiled?"),
            (LIBRARY, "Which compilation flags does the re module define?"),
        ],
    ),
    (
        "What does the language reference say about the global and nonlocal statements, and why "
        "do I get an UnboundLocalError according to the FAQ?",
        [
            (REFERENCE, "What do the global and nonlocal statements do?"),
            (HOWTO, "Why am I getting an UnboundLocalError when the variable has a value?"),
        ],
    ),
    (
        "How does the tutorial introduce virtual environments, and how does the venv module "
        "create them?",
        [
            (TUTORIAL, "How do I create and use a virtual environment?"),
            (LIBRARY, "How does the venv module create virtual environments?"),
        ],
    ),
    # --- three parts -------------------------------------------------------------------------
    (
        "How does the tutorial introduce classes, what does the language reference say about "
        "class definitions, and how does the descriptor HOWTO explain properties?",
        [
            (TUTORIAL, "How are classes introduced and defined?"),
            (REFERENCE, "How is a class definition executed?"),
            (HOWTO, "How do descriptors implement properties?"),
        ],
    ),
    (
        "How does the tutorial explain default argument values, how does the language reference "
        "evaluate default parameter values, and why are default values shared between objects "
        "according to the FAQ?",
        [
            (TUTORIAL, "How do default argument values work?"),
            (REFERENCE, "When are default parameter values evaluated?"),
            (HOWTO, "Why are default values shared between objects?"),
        ],
    ),
    (
        "How does the argparse tutorial start a command-line program, what does the argparse "
        "module say about sub-commands, and how does the tutorial read command line arguments?",
        [
            (HOWTO, "How do I start a command-line program with argparse?"),
            (LIBRARY, "How does argparse support sub-commands?"),
            (TUTORIAL, "How are command line arguments read from sys.argv?"),
        ],
    ),
    (
        "What does the tutorial say about the str.format method, what is the format "
        "specification mini-language in the string module, and how does the language reference "
        "define formatted string literals?",
        [
            (TUTORIAL, "How does the str.format method format strings?"),
            (LIBRARY, "What is the format specification mini-language?"),
            (REFERENCE, "How are formatted string literals defined?"),
        ],
    ),
    (
        "How does the language reference define yield expressions, which iterator building blocks "
        "does itertools offer, and what does the functional programming HOWTO say about "
        "generator expressions?",
        [
            (REFERENCE, "How are yield expressions defined?"),
            (LIBRARY, "Which iterator building blocks does itertools offer?"),
            (HOWTO, "What are generator expressions?"),
        ],
    ),
    (
        "How does the tutorial explain floating point arithmetic errors, what does the decimal "
        "module provide, and why are floating point calculations inaccurate according to the FAQ?",
        [
            (TUTORIAL, "Why do floating point numbers have representation errors?"),
            (LIBRARY, "What does the decimal module provide for decimal arithmetic?"),
            (HOWTO, "Why are floating-point calculations so inaccurate?"),
        ],
    ),
    (
        "What does the language reference say about the import system, how do I import a module "
        "programmatically with importlib, and how does the tutorial explain packages?",
        [
            (REFERENCE, "How does the import system find and load modules?"),
            (LIBRARY, "How do I import a module programmatically with importlib.import_module?"),
            (TUTORIAL, "How are packages structured with __init__.py files?"),
        ],
    ),
    (
        "How do I write test cases with unittest, what does the tutorial say about quality "
        "control with doctest, and how does the FAQ suggest testing a program?",
        [
            (LIBRARY, "How do I write test cases with unittest.TestCase?"),
            (TUTORIAL, "What does the tutorial say about quality control with doctest?"),
            (HOWTO, "How do I test a Python program or component?"),
        ],
    ),
    (
        "What does the descriptor HOWTO say about the __get__ method, how does the data model "
        "describe implementing descriptors, and what does functools.cached_property do?",
        [
            (HOWTO, "What does the __get__ method of a descriptor do?"),
            (REFERENCE, "How are descriptors implemented in the data model?"),
            (LIBRARY, "What does functools.cached_property do?"),
        ],
    ),
    (
        "How does the Unicode HOWTO explain encodings, what does the codecs module provide, and "
        "how are escape sequences in string literals defined in the language reference?",
        [
            (HOWTO, "What are encodings according to the Unicode HOWTO?"),
            (LIBRARY, "What does the codecs module provide?"),
            (REFERENCE, "Which escape sequences do string literals recognise?"),
        ],
    ),
]

QUESTIONS: dict[str, tuple[Part, ...]] = {
    question: tuple(Part(tool, text) for tool, text in parts) for question, parts in _QUESTIONS
}
