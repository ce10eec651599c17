// Package pipeline gathers concurrent writes into batches, so that a batch
// of N writes costs the database one commit instead of N. It knows nothing
// of transactions: storage runs each batch (storage/group.go) and answers
// each of its writes.
//
// # The contract
//
// What the pipeline promises its runner and its callers:
//
//   - Lanes, not accounts. A write is queued under a key (an account, a
//     registration) in one of a few lanes, each of which runs one batch
//     at a time, in the order its writes arrived. While a key has a write
//     queued or running, its next writes join the same lane: two writes
//     of one account never run in two batches at once, and never out of
//     order. A key with none goes to the first lane with room in its next
//     batch, so that writes fill a batch before they open another (a
//     commit costs the same however many writes it holds), and spill to
//     the next lane only when one batch cannot hold them.
//   - Batches gather while the one before runs: up to a batch's size of
//     the writes that arrived meanwhile, of any keys.
//   - A caller that leaves before a batch takes its write is told at once
//     (Do's ok is false), and the write never runs. Once taken, the
//     caller waits for the answer, however long, so that nothing the write
//     shares with its caller is touched after the caller returned.
//
// What storage's runner (storage/group.go) promises on top, which is what
// a rule may rely on when it writes through storage.WriteGrouped:
//
//   - Each write is its own: it runs in a savepoint of the batch's
//     transaction, and one that fails is rolled back to it and changes
//     nothing; the others commit. A write sees what the writes before it
//     in its batch did, as it would have after their commits.
//   - When the batch cannot commit (a constraint only the commit checks, a
//     cap or a rate limit passed by the batch together, a deadlock), every
//     write of it runs again alone, as storage.Write would have run it: one
//     account's refusal never fails another's write. So a write's function
//     may run twice, and must start from nothing each time.
//   - The answer is the one the write would have had alone, under the same
//     rules: the pipeline's differential test (dnsupdate) runs every write
//     rule alone and batched, on SQLite and PostgreSQL, and requires the
//     same results and the same limits.
//   - What is exact alone stays exact in a batch by construction, not by
//     the rule's care. A part reads and locks rows as it would alone
//     (storage.Queries.LockAccount, AccountAndPool, HostnameForMint); the
//     one difference, its new hostnames put off to the batch's last
//     statement, is counted into the parts after it (storage's
//     pendingActive). On PostgreSQL every write, in a batch or alone, first
//     locks the accounts it is keyed by, in the order of their ids
//     (storage's lockFirst), so that accounts are taken before the rows
//     under them and in one order, and batches on several nodes do not
//     deadlock. A read made ahead for a part is used only if the parts
//     before it changed nothing it read (storage/prefetch.go).
package pipeline
