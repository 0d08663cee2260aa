"""PDF documents (the `pdf` extra: pypdf).

Why pypdf: pure Python, maintained, no system library (poppler, mupdf) to install in CI, and its
text extraction keeps the reading order of ordinary documents. A PDF's page is a page here:
page N of the PDF is page N of the document, so a citation sends the reader to the page their
viewer shows. Pages without text (scans, blank pages) are skipped; the others keep their
numbers. The PDF's own title (its metadata) is the document's title when it has one.
"""

from __future__ import annotations

import io
import logging

import pypdf
from pypdf.errors import PyPdfError

from runner.retrieval.readers import CorpusError, Document
from runner.text import normalize


class PdfReader:
    def read(self, path: str, raw: bytes) -> Document:
        logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed-but-readable warnings
        try:
            reader = pypdf.PdfReader(io.BytesIO(raw))
            if reader.is_encrypted:
                raise CorpusError(
                    f"{path}: the PDF is encrypted; decrypt it (e.g. qpdf --decrypt) or leave "
                    "it out with the corpus's `exclude:`"
                )
            pages = []
            for number, page in enumerate(reader.pages, 1):
                text = normalize(page.extract_text() or "").strip()
                if text:
                    pages.append((number, text))
            title = (reader.metadata.title if reader.metadata else None) or ""
        except (PyPdfError, ValueError, KeyError, TypeError) as error:
            raise CorpusError(f"{path}: not readable as PDF ({error})") from None
        return Document(path, "", "pdf", normalize(str(title)).strip(), fixed_pages=tuple(pages))


READER = PdfReader()
