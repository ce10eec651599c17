package storage

import "time"

// SetBackupTick makes BackupWith report every d, for tests that must see
// a report while the copy runs; the returned func restores the default.
func SetBackupTick(d time.Duration) (restore func()) {
	old := backupTick
	backupTick = d
	return func() { backupTick = old }
}
