"""The prompts, each with a version: a changed prompt gets a new version, so texts made by the old
one are regenerated instead of served as if the new prompt had made them."""

from __future__ import annotations

LANG_NAMES = {"en": "English", "zh": "Simplified Chinese"}
LANGS = tuple(LANG_NAMES)

VERSIONS = {
    "tldr": "tldr-1",
    "faq": "faq-1",
    "translate_title": "title-1",
    "translate_abstract": "abstract-1",
    "translate_query": "query-2",  # query-2: the reply loses a label like "Search query in English:"
    "ask": "ask-1",
    "questions": "questions-1",
    "translate_section": "section-1",  # a passage of a paper's body (translate/, its own prompt)
}

# sampling temperature per task (the client's 0.2 otherwise): a search query's rendering is greedy, so
# one query always searches the same English (at 0.2 the zh set's train MRR@10 moved by 0.02 run to run)
TEMPERATURE = {"translate_query": 0.0}

# the most tokens each task may write (a cap from the settings lowers them all)
MAX_TOKENS = {
    "tldr": 96,
    "faq": 400,
    "translate_title": 96,
    "translate_abstract": 700,
    "translate_query": 64,
    "ask": 400,
    "questions": 160,
    # a passage of at most 1,800 characters, translated whole (translate/ asks for what each needs)
    "translate_section": 1400,
}

SYSTEM = "You are a careful research assistant. Answer only from the text you are given."


# what the body of a paper is searched for when a TL;DR reads it: what it contributes, what it found,
# how it concludes (a small model gets the first two)
TLDR_BODY_QUERIES = (
    "we propose introduce contributions novel approach",
    "results show outperforms improves accuracy state of the art",
    "conclusion we presented showed",
)


def tldr(title: str, abstract: str, lang: str, passages: list[str] | None = None) -> list[dict[str, str]]:
    """`passages`: passages of the paper's body ("p.N, section: text"), when it has one."""
    body = "".join(f"\n[{x}]" for x in passages or [])
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Title: {title}\nAbstract: {abstract}\n"
            + (f"\nPassages of the paper:{body}\n" if body else "")
            + f"\nWrite a TL;DR of this paper in {LANG_NAMES[lang]}: one sentence, at most 30 words, saying what "
            "the paper contributes. Reply with the sentence only.",
        },
    ]


# what the body of a paper is searched for, per FAQ question (its best passage joins the abstract)
FAQ_BODY_QUERIES = (
    "problem challenge motivation we address",
    "method approach we propose model architecture",
    "results experiments outperforms accuracy improvement",
    "limitations future work fails",
)


def faq(title: str, abstract: str, lang: str, passages: list[str] | None = None) -> list[dict[str, str]]:
    """`passages`: the best passages of the paper's body ("p.N, section: text"), when it has one."""
    qs = {
        "en": ["What problem does it address?", "What is the method?", "What are the results?", "What are the limits?"],
        "zh": ["解决了什么问题？", "用了什么方法？", "取得了什么结果？", "有哪些局限？"],
    }[lang]
    lines = "\n".join(f"Q: {q}\nA: ..." for q in qs)
    body = "".join(f"\n[{x}]" for x in passages or [])
    source = "the abstract and these passages of the paper" if body else "the abstract"
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Title: {title}\nAbstract: {abstract}\n"
            + (f"\nPassages of the paper:{body}\n" if body else "")
            + f"\nAnswer these four questions about the paper in {LANG_NAMES[lang]}, one or two sentences each, "
            f"only from {source} (say so when they do not tell). Keep this format:\n" + lines,
        },
    ]


def translate(text: str, kind: str, lang: str) -> list[dict[str, str]]:
    what = {"title": "paper title", "abstract": "paper abstract", "query": "search query"}[kind]
    return [
        {"role": "system", "content": "You are a professional translator of machine-learning research papers."},
        {
            "role": "user",
            "content": f"Translate this {what} into {LANG_NAMES[lang]}. Keep technical terms, acronyms, model names and "
            f"formulas as they are. Reply with the translation only.\n\n{text}",
        },
    ]


# the second turn when a Chinese request came back in another language
FIRMER_ZH = (
    "That reply is not in Chinese. Write it again in Simplified Chinese (简体中文) only, keeping technical terms, "
    "acronyms and model names as they are. 请只用简体中文回答。"
)

NOT_FOUND = {"en": "Not in these papers.", "zh": "这些论文中没有答案。"}


def ask(question: str, sources: list[tuple[int, str, str]], lang: str) -> list[dict[str, str]]:
    """`sources`: (number, title, abstract) of each retrieved paper, cited as [number]."""
    docs = "\n\n".join(f"[{n}] {title}\n{abstract}" for n, title, abstract in sources)
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Papers:\n\n{docs}\n\nQuestion: {question}\n\n"
            f"Answer in {LANG_NAMES[lang]} using only these papers. After every claim put the number of the "
            f"paper it comes from in brackets, like [1] or [2][3]. If the papers do not answer the question, "
            f"reply exactly: {NOT_FOUND[lang]}",
        },
    ]


def questions(title: str, abstract: str, lang: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Title: {title}\nAbstract: {abstract}\n\n"
            f"You will meet an author of this paper at their poster. Write three short, specific questions "
            f"worth asking them, in {LANG_NAMES[lang]}, one per line, nothing else.",
        },
    ]
