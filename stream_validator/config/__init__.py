"""The service configuration: the YAML file, its environment overrides and checks.

``settings`` decodes and checks the file into ``ServiceConfig``; ``schema`` is the file's
typed shape (msgspec Structs: keys, types, bounds); ``topicpattern`` is the
portable regular-expression subset routes subscribe with; ``redaction`` keeps secrets
out of logs and errors.
"""
