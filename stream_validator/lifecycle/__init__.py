"""The contract lifecycle: draft a contract from a sample (``infer``) and classify the
changes between two versions (``diff``), with the sample's flipped records (``flips``).

``observe``, ``bounds``, ``infer``, ``draftyaml``, ``change``, ``diff``, ``diffrules`` and
``flips`` are pure; ``lines`` reads JSON-lines streams and ``topic`` samples a topic through
the Kafka adapter's ports (the command line makes the clients).
"""
