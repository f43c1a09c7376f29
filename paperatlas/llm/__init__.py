"""The language-model layer: one client for any OpenAI-compatible endpoint, and what the library
makes with it (TL;DRs, FAQs, translations, answers, cheat-sheets), cached in the library."""

from .capability import Llm
from .client import LlmClient, LlmConfig, LlmError, NoEndpoint
from .extractive import extractive_tldr
from .models import Answer, BatchStatus, CheatItem, Faq, Generated, Translation

__all__ = [
    "Answer",
    "BatchStatus",
    "CheatItem",
    "Faq",
    "Generated",
    "Llm",
    "LlmClient",
    "LlmConfig",
    "LlmError",
    "NoEndpoint",
    "Translation",
    "extractive_tldr",
]
