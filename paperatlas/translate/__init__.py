"""Whole papers in another language: section by section, formulas, numbers and citations kept."""

from .capability import FullTranslation, SectionText, Translator

__all__ = ["FullTranslation", "SectionText", "Translator"]
