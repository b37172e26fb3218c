//! The PostgreSQL store against a throwaway server.
