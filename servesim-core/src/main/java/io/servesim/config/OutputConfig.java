package io.servesim.config;

/** What a replay writes besides summary.json and canonical.json. */
public record OutputConfig(boolean requestsCsv) {}
