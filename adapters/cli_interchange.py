"""`studybot import` and `studybot export`, declared for the CLI; what they run is `bot.interchange.cli`."""

from __future__ import annotations

from adapters.subcommand import Subcommand
from bot.interchange import cli as interchange

IMPORT = Subcommand("import", "read question banks and flashcards into a lesson pack", interchange.run_import,
                    interchange.import_arguments)
EXPORT = Subcommand("export", "a lesson as Anki, GIFT or Moodle XML; the cohort's scores as a gradebook CSV",
                    interchange.run_export, interchange.export_arguments)
