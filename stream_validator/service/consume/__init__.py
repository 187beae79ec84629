"""What the Kafka clients call back (rebalances, statistics, errors) and the start-up wait
for the topics and the brokers."""
