"""The service configuration: the YAML file, its environment overrides and checks.

``settings`` decodes and checks the file into ``ServiceConfig`` (the values: ``model``;
the rules between keys: ``keyrules``; the routes: ``routes``); ``schema`` is the file's
typed shape (msgspec Structs: keys, types, bounds); ``topicpattern`` is the
portable regular-expression subset routes subscribe with; ``redaction`` keeps secrets
out of logs and errors.
"""
