"""Bring a course in and take it out: question banks and flashcards read into lesson packs
(`studybot import`), and a lesson's quiz and glossary written for Anki, GIFT and Moodle XML
(`studybot export`).

Readers (`readers/`, one module per format) turn a file into the neutral items of `model`; one
writer (`pack_writer`) turns items into a lesson pack; exporters (`exporters/`) turn a loaded lesson
into another format. Every file is read through `safety` (bounded sizes, checked zip members,
defused XML)."""
