"""Retrievals keep id, score and content whatever shape the documents come in (tuples, objects, metadata)."""

import json
from collections import namedtuple
from dataclasses import dataclass

import pytest

from agentotel import retrieval
from agentotel import semconv as sc

Row = namedtuple("Row", "id score content")


@dataclass
class Hit:
    id: str
    score: float
    text: str


class LangChainLike:
    """Like langchain_core.documents.Document: content, and id and score in its metadata."""

    def __init__(self, content: str, **metadata):
        self.page_content = content
        self.metadata = metadata


@pytest.mark.parametrize("returned, expected", [
    ([("d1", 0.9, "first")], [{"id": "d1", "score": 0.9, "content": "first"}]),
    ([("d1", "first", 0.9)], [{"id": "d1", "score": 0.9, "content": "first"}]),
    ([Row("d2", 0.8, "second")], [{"id": "d2", "score": 0.8, "content": "second"}]),
    ([Hit("d3", 0.7, "third")], [{"id": "d3", "score": 0.7, "content": "third"}]),
    ([LangChainLike("fourth", id="d4", score=0.6)], [{"id": "d4", "score": 0.6, "content": "fourth"}]),
    ([{"content": "fifth", "metadata": {"source": "kb/5", "relevance_score": 0.5}}],
     [{"id": "kb/5", "score": 0.5, "content": "fifth"}]),
    ([(LangChainLike("sixth", id="d6"), 0.4)], [{"id": "d6", "score": 0.4, "content": "sixth"}]),
])
def test_documents_keep_id_score_and_content(recorded, returned, expected):
    @retrieval(data_source="kb")
    def search(query: str):
        return returned

    assert search("q") is returned
    span = recorded.one("retrieval kb")
    assert json.loads(span.attributes[sc.GEN_AI_RETRIEVAL_DOCUMENTS]) == expected
