-- The rights a dongle's role needs on a team's state database, and no
-- more (README, "Team scale": least privilege). Run by the role that owns
-- the tables (here `dongle_admin`), after its first connection created
-- them, and again after an upgrade that adds tables:
--
--   psql "postgres://dongle_admin@db.internal/safety" -f grants.sql
--
-- The dongles connect as `dongle`. It is not the tables' owner, so it
-- cannot drop or alter them, disable or drop the audit log's append-only
-- triggers, or truncate anything; it can only add to the audit log and to
-- the kept policy versions, and only read the central policy (pushing a
-- version takes the administrator's role).

REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO dongle;

-- The state every decision reads and writes.
GRANT SELECT, INSERT, UPDATE, DELETE ON
    executions, blocks, challenges, events, verify_failures, lockouts,
    downstream_servers, agent_steps, loaded, durability
    TO dongle;

-- Append-only: rows are added, never changed or removed.
GRANT SELECT, INSERT ON audit, policy_versions, spooled TO dongle;

-- Read-only: the schema's version, and the central policy (pushed with
-- the administrator's role).
GRANT SELECT ON schema_version, central_policy TO dongle;

-- Row ids drawn from sequences.
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO dongle;
