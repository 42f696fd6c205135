// Loaded before every test file (bunfig.toml). Tests log nothing unless asked to.
process.env.LOG_LEVEL ??= "silent";
