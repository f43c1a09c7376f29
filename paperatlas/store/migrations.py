"""Ordered, named schema migrations. Append new ones; never edit an applied one."""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "papers",
        """
        CREATE TABLE papers (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            title_derived INTEGER NOT NULL DEFAULT 0,
            abstract TEXT NOT NULL DEFAULT '',
            authors TEXT NOT NULL DEFAULT '[]',
            venue TEXT NOT NULL DEFAULT '',
            year INTEGER,
            status TEXT NOT NULL DEFAULT '',
            track TEXT NOT NULL DEFAULT '',
            keywords TEXT NOT NULL DEFAULT '[]',
            url TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            source_pos INTEGER,
            raw TEXT NOT NULL DEFAULT '',
            extra TEXT NOT NULL DEFAULT '{}',
            content_hash TEXT NOT NULL,
            dedup_key TEXT NOT NULL,
            added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
        CREATE INDEX papers_dedup ON papers(dedup_key);
        CREATE INDEX papers_venue_year ON papers(venue, year);
        CREATE INDEX papers_source_pos ON papers(source, source_pos);
        -- every ingested record (by hash of its raw fields) -> the paper it became;
        -- lets a re-ingest skip unchanged records without re-normalising them
        CREATE TABLE records (
            record_hash TEXT PRIMARY KEY,
            paper_id TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX records_paper ON records(paper_id);
        -- other ids under which a merged duplicate is known
        CREATE TABLE aliases (
            alias TEXT PRIMARY KEY,
            paper_id TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    ),
    (
        "papers_fts",
        """
        CREATE VIRTUAL TABLE papers_fts USING fts5(
            title, abstract, authors, keywords,
            content='papers', content_rowid='rowid',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER papers_ai AFTER INSERT ON papers BEGIN
            INSERT INTO papers_fts(rowid, title, abstract, authors, keywords)
            VALUES (new.rowid, new.title, new.abstract, new.authors, new.keywords);
        END;
        CREATE TRIGGER papers_ad AFTER DELETE ON papers BEGIN
            INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors, keywords)
            VALUES ('delete', old.rowid, old.title, old.abstract, old.authors, old.keywords);
        END;
        CREATE TRIGGER papers_au AFTER UPDATE OF title, abstract, authors, keywords ON papers BEGIN
            INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors, keywords)
            VALUES ('delete', old.rowid, old.title, old.abstract, old.authors, old.keywords);
            INSERT INTO papers_fts(rowid, title, abstract, authors, keywords)
            VALUES (new.rowid, new.title, new.abstract, new.authors, new.keywords);
        END;
        """,
    ),
    (
        "vectors",
        """
        -- one vector per paper per model; content_hash says which text it embeds,
        -- so an edited paper is re-embedded
        CREATE TABLE vectors (
            paper_id TEXT NOT NULL,
            model TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (paper_id, model)
        ) WITHOUT ROWID;
        CREATE INDEX vectors_model ON vectors(model);
        """,
    ),
    (
        "readers",
        """
        -- local readers of one library; the token authorises HTTP writes as that reader
        CREATE TABLE readers (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            token TEXT NOT NULL,
            preferences TEXT NOT NULL DEFAULT '',
            profile TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        -- explicit judgements: 'like' (= star / save), 'dislike' (not interested), 'seen'
        CREATE TABLE feedback (
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            paper_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('like', 'dislike', 'seen')),
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            PRIMARY KEY (reader_id, paper_id, kind)
        ) WITHOUT ROWID;
        CREATE INDEX feedback_reader_time ON feedback(reader_id, created_at);
        CREATE TABLE tags (
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            paper_id TEXT NOT NULL,
            tag TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            PRIMARY KEY (reader_id, paper_id, tag)
        ) WITHOUT ROWID;
        CREATE TABLE notes (
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            paper_id TEXT NOT NULL,
            note TEXT NOT NULL,
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            PRIMARY KEY (reader_id, paper_id)
        ) WITHOUT ROWID;
        -- "A or B?" triage answers
        CREATE TABLE choices (
            id INTEGER PRIMARY KEY,
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            winner TEXT NOT NULL,
            loser TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        );
        CREATE TABLE saved_searches (
            id INTEGER PRIMARY KEY,
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            query TEXT NOT NULL,
            params TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
            UNIQUE (reader_id, name)
        );
        """,
    ),
    (
        "papers_updated_index",
        # data_version() runs max(updated_at) twice per search; without an index that scans
        # every row (~10-30 ms on the 8k-paper venue library), the largest cost of a search
        "CREATE INDEX IF NOT EXISTS papers_updated ON papers(updated_at);",
    ),
    (
        "topics",
        """
        -- the topic model of the last `paperatlas topics build`, replaced whole on rebuild
        CREATE TABLE topics (
            level TEXT NOT NULL CHECK (level IN ('coarse', 'fine')),
            topic INTEGER NOT NULL,
            parent INTEGER,
            size INTEGER NOT NULL,
            label TEXT NOT NULL,
            phrases TEXT NOT NULL DEFAULT '[]',
            central TEXT NOT NULL DEFAULT '[]',
            x REAL NOT NULL DEFAULT 0,
            y REAL NOT NULL DEFAULT 0,
            PRIMARY KEY (level, topic)
        ) WITHOUT ROWID;
        -- each paper's topics, map position and own key phrases
        CREATE TABLE paper_topics (
            paper_id TEXT PRIMARY KEY,
            coarse INTEGER NOT NULL,
            fine INTEGER NOT NULL,
            x REAL NOT NULL,
            y REAL NOT NULL,
            phrases TEXT NOT NULL DEFAULT '[]'
        ) WITHOUT ROWID;
        -- document frequency of key-phrase keys, so related-paper reasons prefer rare phrases
        CREATE TABLE phrase_df (
            phrase TEXT PRIMARY KEY,
            df INTEGER NOT NULL
        ) WITHOUT ROWID;
        """,
    ),
    (
        "papers_fts_batch_insert",
        # New papers are indexed by SQLiteStore.write_batch with one INSERT ... SELECT per batch,
        # in the batch's transaction: a per-row trigger cost 2.5x as much (1.1 s vs 0.45 s for
        # the 8,088 venue papers). The update and delete triggers still keep FTS5 in sync.
        # Two indexes no query uses go too (ingest reads identities with one full scan).
        """
        DROP TRIGGER IF EXISTS papers_ai;
        DROP INDEX IF EXISTS papers_dedup;
        DROP INDEX IF EXISTS papers_source_pos;
        """,
    ),
    (
        "sources",
        """
        -- where each fetch stands: the page to resume from after a kill, the last complete
        -- run; written in the same transaction as the batch of papers it follows
        CREATE TABLE source_state (
            key TEXT PRIMARY KEY,
            state TEXT NOT NULL DEFAULT '{}',
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
        -- subscriptions that `paperatlas update` fetches
        CREATE TABLE follows (
            key TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            args TEXT NOT NULL DEFAULT '[]',
            options TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            last_run_at TEXT NOT NULL DEFAULT '',
            last_summary TEXT NOT NULL DEFAULT '',
            last_error TEXT NOT NULL DEFAULT ''
        );
        """,
    ),
    (
        "papers_title_key",
        # an arXiv preprint and its conference version share a title but rarely an abstract: the
        # normalised title (filled as papers are written; '' for derived or very short titles)
        # finds the pairs that become one paper with both ids
        """
        ALTER TABLE papers ADD COLUMN title_key TEXT NOT NULL DEFAULT '';
        CREATE INDEX papers_title_key ON papers(title_key);
        """,
    ),
    (
        "programme",
        # a conference's programme: each event is one presentation of a paper (a paper may have a
        # poster and an oral); times keep the feed's offset (start_at) and sort by UTC (start_utc);
        # paper_id is '' for an event that names no paper of the library
        """
        CREATE TABLE programme_events (
            feed TEXT NOT NULL,
            event_id TEXT NOT NULL,
            paper_id TEXT NOT NULL DEFAULT '',
            name TEXT NOT NULL DEFAULT '',
            type TEXT NOT NULL DEFAULT '',
            session TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            start_at TEXT NOT NULL DEFAULT '',
            end_at TEXT NOT NULL DEFAULT '',
            start_utc TEXT NOT NULL DEFAULT '',
            end_utc TEXT NOT NULL DEFAULT '',
            room TEXT NOT NULL DEFAULT '',
            poster_position TEXT NOT NULL DEFAULT '',
            poster_number INTEGER,
            url TEXT NOT NULL DEFAULT '',
            paper_url TEXT NOT NULL DEFAULT '',
            authors TEXT NOT NULL DEFAULT '[]',
            withdrawn INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (feed, event_id)
        );
        CREATE INDEX programme_events_paper ON programme_events(paper_id);
        CREATE INDEX programme_events_session ON programme_events(session_id);
        -- what a later read of the feed changed: moved, retimed, withdrawn or added events
        CREATE TABLE programme_changes (
            id INTEGER PRIMARY KEY,
            feed TEXT NOT NULL,
            event_id TEXT NOT NULL,
            paper_id TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            before TEXT NOT NULL DEFAULT '{}',
            after TEXT NOT NULL DEFAULT '{}',
            at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
        CREATE INDEX programme_changes_paper ON programme_changes(paper_id);
        """,
    ),
    (
        "llm_texts",
        # texts made by a language model (or the extractive summariser), keyed by what made them:
        # one row per subject, task, language, model and prompt version; text_hash is the hash of the
        # input, so an edited abstract makes its texts stale (they are regenerated, never served)
        """
        CREATE TABLE llm_texts (
            subject TEXT NOT NULL,
            task TEXT NOT NULL,
            lang TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            PRIMARY KEY (subject, task, lang, model, prompt_version)
        ) WITHOUT ROWID;
        CREATE INDEX llm_texts_task ON llm_texts(task, lang);
        """,
    ),
    (
        "web_sessions",
        # a web sign-in is a row here, so signing out ends it on the server (a signed cookie
        # alone would keep working until it expires); only a hash of the cookie's id is kept
        """
        CREATE TABLE web_sessions (
            id_hash TEXT PRIMARY KEY,
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            expires_at TEXT NOT NULL
        );
        CREATE INDEX web_sessions_reader ON web_sessions(reader_id);
        """,
    ),
    (
        "citation_works",
        # each library paper's OpenAlex work, as `enrich` (or `fetch openalex`) matched it: how it was
        # matched and how sure, the citation counts and the works it names. `matched` is 0 for a
        # paper looked up and not found (so the next run does not ask again until it is stale).
        # citation_refs holds one row per (paper, work it references), so "who in the library cites
        # this work" is one indexed look-up instead of a scan of every reference list.
        """
        CREATE TABLE citation_works (
            paper_id TEXT PRIMARY KEY,
            openalex_id TEXT NOT NULL DEFAULT '',
            matched INTEGER NOT NULL DEFAULT 1,
            method TEXT NOT NULL DEFAULT '',
            score REAL,
            cited_by_count INTEGER,
            counts_by_year TEXT NOT NULL DEFAULT '[]',
            related_works TEXT NOT NULL DEFAULT '[]',
            references_count INTEGER NOT NULL DEFAULT 0,
            fetched_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
        CREATE INDEX citation_works_openalex ON citation_works(openalex_id);
        CREATE TABLE citation_refs (
            paper_id TEXT NOT NULL,
            work_id TEXT NOT NULL,
            PRIMARY KEY (paper_id, work_id)
        );
        CREATE INDEX citation_refs_work ON citation_refs(work_id);
        """,
    ),
    (
        "fulltext",
        # the body of a paper read from its PDF: a status row per paper (read, or why not, with the
        # fix), its sections (addressable by paper and index; text_hash so a translation of one can
        # tell when it is stale), paragraphs as passages, captions and the parsed reference list
        # (cited_id: the library paper an entry names, when one matches); the PDF itself is kept
        # beside the library under its sha256
        """
        CREATE TABLE fulltext_status (
            paper_id TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL DEFAULT '',
            fix TEXT NOT NULL DEFAULT '',
            sha256 TEXT NOT NULL DEFAULT '',
            pages INTEGER NOT NULL DEFAULT 0,
            source TEXT NOT NULL DEFAULT '',
            backend TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
        CREATE INDEX fulltext_status_sha ON fulltext_status(sha256);
        CREATE TABLE fulltext_sections (
            paper_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            number TEXT NOT NULL DEFAULT '',
            page INTEGER NOT NULL DEFAULT 1,
            text_hash TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (paper_id, idx)
        );
        CREATE TABLE fulltext_passages (
            rowid INTEGER PRIMARY KEY,
            paper_id TEXT NOT NULL,
            section_idx INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            page INTEGER NOT NULL DEFAULT 1,
            text TEXT NOT NULL
        );
        CREATE INDEX fulltext_passages_paper ON fulltext_passages(paper_id, section_idx, idx);
        CREATE TABLE fulltext_captions (
            paper_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            kind TEXT NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            page INTEGER NOT NULL DEFAULT 1,
            text TEXT NOT NULL,
            PRIMARY KEY (paper_id, idx)
        );
        CREATE TABLE fulltext_references (
            paper_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            raw TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            authors TEXT NOT NULL DEFAULT '[]',
            year INTEGER,
            cited_id TEXT,
            PRIMARY KEY (paper_id, idx)
        );
        CREATE INDEX fulltext_references_cited ON fulltext_references(cited_id);
        CREATE VIRTUAL TABLE passages_fts USING fts5(
            text, section,
            tokenize='porter unicode61 remove_diacritics 2'
        );
        """,
    ),
    (
        "own_papers",
        # a reader's own papers (what they wrote: OpenAlex works or BibTeX entries), apart from the
        # library's papers so they are never listed or searched, with their vectors per model
        """
        CREATE TABLE own_papers (
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            title TEXT NOT NULL,
            abstract TEXT NOT NULL DEFAULT '',
            authors TEXT NOT NULL DEFAULT '[]',
            venue TEXT NOT NULL DEFAULT '',
            year INTEGER,
            keywords TEXT NOT NULL DEFAULT '[]',
            doi TEXT NOT NULL DEFAULT '',
            openalex_id TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            PRIMARY KEY (reader_id, key)
        );
        CREATE TABLE own_vectors (
            reader_id INTEGER NOT NULL REFERENCES readers(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            model TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (reader_id, key, model)
        );
        """,
    ),
    (
        "semantic_scholar",
        # each paper's Semantic Scholar record (TL;DR, external ids, counts; matched=0: looked up, not
        # found) and its citation links with S2's influential mark; other_paper: the library paper the
        # other end is, when one matched
        """
        CREATE TABLE s2_papers (
            paper_id TEXT PRIMARY KEY,
            s2_id TEXT NOT NULL DEFAULT '',
            matched INTEGER NOT NULL DEFAULT 1,
            tldr TEXT NOT NULL DEFAULT '',
            tldr_model TEXT NOT NULL DEFAULT '',
            external_ids TEXT NOT NULL DEFAULT '{}',
            citation_count INTEGER,
            influential_count INTEGER,
            fetched_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        );
        CREATE TABLE s2_links (
            paper_id TEXT NOT NULL,
            direction TEXT NOT NULL,
            other_s2 TEXT NOT NULL,
            other_paper TEXT,
            influential INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (paper_id, direction, other_s2)
        );
        CREATE INDEX s2_links_other ON s2_links(other_paper);
        """,
    ),
    (
        "fulltext_vectors",
        # passages by meaning: a vector per distinct passage text of a paper and model, so a paper read
        # again with the same words keeps its vectors and a changed paragraph loses its own (the hash of
        # each passage's text is kept beside it; '' until the passage is first embedded or read again)
        """
        ALTER TABLE fulltext_passages ADD COLUMN text_hash TEXT NOT NULL DEFAULT '';
        CREATE INDEX fulltext_passages_hash ON fulltext_passages(paper_id, text_hash);
        CREATE TABLE fulltext_vectors (
            paper_id TEXT NOT NULL,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (paper_id, model, text_hash)
        ) WITHOUT ROWID;
        """,
    ),
]
