"""The built-in QA formats, one module each; every module here registers its format (relkt.data.qa_format)."""
