// Package pgwire is the lib/pq connection the store writes through on
// PostgreSQL: what it does by hand to save round trips, in one place.
//
// # The contract
//
//   - A statement marked WithNext (or commented WithNextComment) is kept,
//     not sent, and goes in front of the next statement sent on the same
//     connection, in the same simple query, or before the COMMIT; a
//     rollback drops it. A statement with arguments goes alone (the
//     extended protocol takes one), after the kept ones. The outcome of
//     the transaction is the one of running each at once: if a kept
//     statement fails, the ones after it in its query do not run, and
//     the error is that query's.
//   - A read-write transaction's BEGIN is kept the same way, after a look
//     at the pooled connection's socket, so that a connection the server
//     dropped while idle is replaced before the transaction starts.
//   - A transaction's last query run under CarryCommit carries its COMMIT
//     in the same simple query (where the transaction began here:
//     Conn.CanCarry). Its rows, read to the end, tell whether the COMMIT
//     ran; the transaction's Commit then answers that, without a round
//     trip of its own.
//   - A read gives up after StallTimeout once the schema is ready
//     (Connector.Ready): a silent server fails the statement, and the
//     connection, instead of holding it for good.
//   - Every statement registered with NewStatement is prepared (PREPARE)
//     by every connection as it opens, from Ready on; Statement.Call runs
//     it. They live and die with the session.
//   - Conn.Sent counts the statements sent or kept: a caller that noted it
//     can tell whether anything went on the connection since (the store's
//     memo of a read, and its batches' reads made ahead, rely on it).
//
// The measured gain of each is in docs/performance.md; what storage builds
// on it (savepoints, a write's last statement) is storage's.
package pgwire
