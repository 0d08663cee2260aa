"""Twenty multi-part questions about Python (ten of two parts, ten of three) and the part of the
docs that answers each part: the simulated LLM's script, the same for runner and LlamaIndex, and
each part's answer check (CHECKS).

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

# each part: (the tool that answers it, its own question, its answer check: a phrase of the page
# of the docs that answers it, which a right answer must hold; written from the docs, not from
# what either system retrieved)
_QUESTIONS: list[tuple[str, list[tuple[str, str, str]]]] = [
    # --- two parts ---------------------------------------------------------------------------
    (
        "How does the tutorial show reading a file line by line, and what does the io module "
        "say about the encoding of text files?",
        [
            (TUTORIAL, "How do I read a file line by line?", "loop over the file object"),
            (
                LIBRARY,
                "What does the io module say about the encoding of text files?",
                "is locale-specific",
            ),
        ],
    ),
    (
        "What does the language reference say about the with statement, and how does "
        "contextlib.contextmanager build a context manager?",
        [
            (REFERENCE, "How is the with statement executed?", "wrap the execution of a block"),
            (
                LIBRARY,
                "How does contextlib.contextmanager build a context manager?",
                "factory function for with statement context managers",
            ),
        ],
    ),
    (
        "How does the logging HOWTO suggest configuring loggers, and which handlers does the "
        "logging.handlers module provide?",
        [
            (HOWTO, "How should loggers be configured?", "configure logging in three ways"),
            (
                LIBRARY,
                "Which handlers does the logging.handlers module provide?",
                "RotatingFileHandler",
            ),
        ],
    ),
    (
        "How does the tutorial explain list comprehensions, and how does the language reference "
        "define displays for lists and comprehensions?",
        [
            (TUTORIAL, "How do list comprehensions work?", "concise way to create lists"),
            (
                REFERENCE,
                "How are list displays and comprehensions defined?",
                "enclosed in square brackets",
            ),
        ],
    ),
    (
        "Why must self be used explicitly in methods according to the FAQ, and how does the data "
        "model describe instance methods?",
        [
            (
                HOWTO,
                "Why must self be used explicitly in method definitions and calls?",
                "borrowed from Modula-3",
            ),
            (
                REFERENCE,
                "How does the data model describe instance method objects?",
                "combines a class, a class instance and any callable object",
            ),
        ],
    ),
    (
        "How do I sort with a key function according to the sorting HOWTO, and what does "
        "functools.cmp_to_key do?",
        [
            (
                HOWTO,
                "How do I sort with a key function?",
                "called on each list element prior to making comparisons",
            ),
            (
                LIBRARY,
                "What does functools.cmp_to_key do?",
                "old-style comparison function to a key function",
            ),
        ],
    ),
    (
        "How does the tutorial introduce handling exceptions, and how is the try statement "
        "specified in the language reference?",
        [
            (
                TUTORIAL,
                "How are exceptions handled with try and except?",
                "the try statement works as follows",
            ),
            (REFERENCE, "How is the try statement specified?", "specifies exception handlers"),
        ],
    ),
    (
        "How are regular expressions compiled according to the regex HOWTO, and which flags does "
        "the re module define?",
        [
            (HOWTO, "How are regular expressions compiled?", "compiled into pattern objects"),
            (LIBRARY, "Which compilation flags does the re module define?", "IGNORECASE"),
        ],
    ),
    (
        "What does the language reference say about the global and nonlocal statements, and why "
        "do I get an UnboundLocalError according to the FAQ?",
        [
            (
                REFERENCE,
                "What do the global and nonlocal statements do?",
                "holds for the entire current code block",
            ),
            (
                HOWTO,
                "Why am I getting an UnboundLocalError when the variable has a value?",
                "becomes local to that scope",
            ),
        ],
    ),
    (
        "How does the tutorial introduce virtual environments, and how does the venv module "
        "create them?",
        [
            (TUTORIAL, "How do I create and use a virtual environment?", "-m venv tutorial-env"),
            (
                LIBRARY,
                "How does the venv module create virtual environments?",
                "supports creating lightweight",
            ),
        ],
    ),
    # --- three parts -------------------------------------------------------------------------
    (
        "How does the tutorial introduce classes, what does the language reference say about "
        "class definitions, and how does the descriptor HOWTO explain properties?",
        [
            (
                TUTORIAL,
                "How are classes introduced and defined?",
                "bundling data and functionality together",
            ),
            (
                REFERENCE,
                "How is a class definition executed?",
                "a class definition is an executable statement",
            ),
            (
                HOWTO,
                "How do descriptors implement properties?",
                "succinct way of building a data descriptor",
            ),
        ],
    ),
    (
        "How does the tutorial explain default argument values, how does the language reference "
        "evaluate default parameter values, and why are default values shared between objects "
        "according to the FAQ?",
        [
            (
                TUTORIAL,
                "How do default argument values work?",
                "evaluated at the point of function definition",
            ),
            (
                REFERENCE,
                "When are default parameter values evaluated?",
                "evaluated from left to right when the function definition is executed",
            ),
            (HOWTO, "Why are default values shared between objects?", "created exactly once"),
        ],
    ),
    (
        "How does the argparse tutorial start a command-line program, what does the argparse "
        "module say about sub-commands, and how does the tutorial read command line arguments?",
        [
            (HOWTO, "How do I start a command-line program with argparse?", "ArgumentParser"),
            (LIBRARY, "How does argparse support sub-commands?", "add_subparsers"),
            (
                TUTORIAL,
                "How are command line arguments read from sys.argv?",
                "argv attribute as a list",
            ),
        ],
    ),
    (
        "What does the tutorial say about the str.format method, what is the format "
        "specification mini-language in the string module, and how does the language reference "
        "define formatted string literals?",
        [
            (
                TUTORIAL,
                "How does the str.format method format strings?",
                "basic usage of the str.format method",
            ),
            (
                LIBRARY,
                "What is the format specification mini-language?",
                "define how individual values are presented",
            ),
            (
                REFERENCE,
                "How are formatted string literals defined?",
                "is a string literal that is prefixed with",
            ),
        ],
    ),
    (
        "How does the language reference define yield expressions, which iterator building blocks "
        "does itertools offer, and what does the functional programming HOWTO say about "
        "generator expressions?",
        [
            (
                REFERENCE,
                "How are yield expressions defined?",
                "used when defining a generator function",
            ),
            (
                LIBRARY,
                "Which iterator building blocks does itertools offer?",
                "implements a number of iterator building blocks",
            ),
            (HOWTO, "What are generator expressions?", "surrounded by parentheses"),
        ],
    ),
    (
        "How does the tutorial explain floating point arithmetic errors, what does the decimal "
        "module provide, and why are floating point calculations inaccurate according to the FAQ?",
        [
            (
                TUTORIAL,
                "Why do floating point numbers have representation errors?",
                "base 2 (binary) fractions",
            ),
            (
                LIBRARY,
                "What does the decimal module provide for decimal arithmetic?",
                "fast correctly rounded decimal floating point arithmetic",
            ),
            (
                HOWTO,
                "Why are floating-point calculations so inaccurate?",
                "how the underlying platform handles floating-point",
            ),
        ],
    ),
    (
        "What does the language reference say about the import system, how do I import a module "
        "programmatically with importlib, and how does the tutorial explain packages?",
        [
            (
                REFERENCE,
                "How does the import system find and load modules?",
                "combines two operations",
            ),
            (
                LIBRARY,
                "How do I import a module programmatically with importlib.import_module?",
                "in absolute or relative terms",
            ),
            (
                TUTORIAL,
                "How are packages structured with __init__.py files?",
                "required to make Python treat directories",
            ),
        ],
    ),
    (
        "How do I write test cases with unittest, what does the tutorial say about quality "
        "control with doctest, and how does the FAQ suggest testing a program?",
        [
            (
                LIBRARY,
                "How do I write test cases with unittest.TestCase?",
                "subclassing unittest.TestCase",
            ),
            (
                TUTORIAL,
                "What does the tutorial say about quality control with doctest?",
                "validating tests embedded in a program's docstrings",
            ),
            (HOWTO, "How do I test a Python program or component?", "two testing frameworks"),
        ],
    ),
    (
        "What does the descriptor HOWTO say about the __get__ method, how does the data model "
        "describe implementing descriptors, and what does functools.cached_property do?",
        [
            (
                HOWTO,
                "What does the __get__ method of a descriptor do?",
                "recognized by its __get__ method",
            ),
            (
                REFERENCE,
                "How are descriptors implemented in the data model?",
                "so-called descriptor class",
            ),
            (LIBRARY, "What does functools.cached_property do?", "computed once and then cached"),
        ],
    ),
    (
        "How does the Unicode HOWTO explain encodings, what does the codecs module provide, and "
        "how are escape sequences in string literals defined in the language reference?",
        [
            (
                HOWTO,
                "What are encodings according to the Unicode HOWTO?",
                "called a character encoding",
            ),
            (
                LIBRARY,
                "What does the codecs module provide?",
                "base classes for standard Python codecs",
            ),
            (
                REFERENCE,
                "Which escape sequences do string literals recognise?",
                "backslash and newline ignored",
            ),
        ],
    ),
]

QUESTIONS: dict[str, tuple[Part, ...]] = {
    question: tuple(Part(tool, text) for tool, text, _check in parts)
    for question, parts in _QUESTIONS
}

# question -> the answer check of each of its parts, in the parts' order (bench.multipart counts
# how many of them the text sent to the answering LLM holds: `holds_check`)
CHECKS: dict[str, tuple[str, ...]] = {
    question: tuple(check for _tool, _text, check in parts) for question, parts in _QUESTIONS
}
