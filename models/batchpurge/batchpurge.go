// Package batchpurge deletes a table's expired rows in short batches,
// each its own transaction, with the write lock left free between them
// (models.Store.PurgeExpired, issue #36): a purge of millions of rows
// holds no lock a sign-in waits for longer than about one short batch.
// It knows tables only by name and the dialect by a flag, so it does not
// import models.
package batchpurge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/latchkey-auth/latchkey/models/onerow"
	"gorm.io/gorm"
)

// Expired deletes table's rows whose expires is before now, key being
// the column a batch's rows are found again by, and returns how many went.
func Expired(ctx context.Context, db *gorm.DB, postgres bool, table, key string, now time.Time) (int64, error) {
	if postgres {
		return purgePostgres(ctx, db, table, key, now)
	}
	return purgeSQLite(ctx, db, table, key, now)
}

const (
	// sqlitePurgeBatch is the most rows one of the SQLite purge's deletes
	// removes. A batch holds the one write lock for as long as it runs, and
	// each deleted session changes pages of six B-trees (the table; the
	// token_hash, user_id, expires, (created_at, id) and lookup indexes):
	// 100 rows wrote ~330 WAL frames at 10⁵ sessions, well within the 1 000
	// past which SQLite's auto-checkpoint runs in whichever connection
	// commits (see purgeSQLite), and took 5 ms (27 ms at most) under
	// bench:scale's load on 2 busy cores, where 500 took 46 ms on average.
	sqlitePurgeBatch = 100
	// sqlitePurgeTarget is how long a batch should hold the write lock: the
	// batch after one that took longer is half as large, the batch after
	// one that took under a quarter of it twice as large, between
	// sqlitePurgeMinBatch and sqlitePurgeBatch (nextSQLiteBatch). At 10⁷
	// sessions a deleted row's entries lie on pages the page cache seldom
	// holds, and under the same load batches of 100 took 30–340 ms: a
	// sign-in's insert waited up to 334 ms (issue #36).
	sqlitePurgeTarget   = 20 * time.Millisecond
	sqlitePurgeMinBatch = 5
	// sqlitePurgeFirstBatch is the first batch: small, as what a row costs
	// is not known yet (it grows to sqlitePurgeBatch within a few batches
	// where rows are cheap).
	sqlitePurgeFirstBatch = 10
	// sqlitePurgePause is the least time the SQLite purge leaves the write
	// lock free after a batch. A writer that found it taken sleeps in
	// SQLite's busy handler in steps of 1, 2, 5, 10, 15, 20, 25, 25, 25,
	// 50, 50 and then 100 ms: a free window shorter than the step it is in
	// passes unseen, and then the next batch holds the lock again. 50 ms
	// covers every step of a writer that has waited less than 228 ms.
	sqlitePurgePause = 50 * time.Millisecond
	// postgresPurgeBatch is how many rows one of the PostgreSQL purge's
	// deletes removes: no lock of a batch blocks an insert of a new row,
	// so the batch only bounds the purge's share of the database's CPU and
	// WAL (together with the pause as long as the batch).
	postgresPurgeBatch = 500
)

// purgeSQLite deletes table's rows that expired before now, in batches
// sized to hold the write lock about sqlitePurgeTarget, and after each checkpoints the WAL itself and leaves
// the write lock free for at least sqlitePurgePause (or as long as the
// batch took, if longer). It returns how many rows went.
//
// Why the checkpoint: under load readers always hold a snapshot, so the
// checkpoint SQLite runs right after a commit cannot copy the frames the
// commit just wrote, the WAL is never fully copied, never restarts and
// grows past its 1 000-frame auto-checkpoint threshold for good (to 19 000
// frames during a purge of 6×10⁴ sessions). Past it every commit runs a
// checkpoint, and the first after a batch, a sign-in's that waited for
// the lock, copies the batch's ~750 frames with two fsyncs: measured, a
// sign-in's COMMIT took up to 185 ms that way. Checkpointed by the purge
// a few milliseconds after its commit, once the readers have moved to the
// new snapshot, and once more just before the next batch, the WAL is
// copied whole, the next batch starts it again from the beginning, and a
// sign-in's commit finds a short WAL and checkpoints nothing.
//
// Why the read first: a batch's rows are the oldest sessions, whose pages
// the OS's cache has seldom kept, and each deleted row changes a random
// leaf of every index. Read inside the batch, with the write lock held,
// those pages came from the disk: a sign-in waited 0.4–0.8 s behind one
// batch at 10⁷ sessions with part of the file out of the cache. The
// purge now reads the batch's rows and their index entries first, in a
// read transaction that holds no lock a writer needs (prefetchSQL), so
// that the delete finds its pages in memory. Measured at 10⁷ sessions
// under GET /session load, the OS's cache dropped before each run: the
// purge went from 74–143 to 555–736 rows/s (its batches stay larger), a
// sign-in's insert p99 from 27–150 to 26–63 ms and its longest from
// 0.5–1.1 s to 0.23–0.43 s; with the file in the cache, no change beyond
// the noise.
//
// No keyset over expires is needed here, unlike on PostgreSQL: SQLite
// removes a deleted row's index entries at once, so each batch's walk of
// the expires index starts at the first live expired row.
func purgeSQLite(ctx context.Context, db *gorm.DB, table, key string, now time.Time) (int64, error) {
	batchOf := " IN (SELECT %s FROM " + table + " WHERE expires < ? ORDER BY expires LIMIT ?)"
	del := "DELETE FROM " + table + " WHERE " + key + fmt.Sprintf(batchOf, key)
	reads, err := prefetchSQL(db, table, batchOf)
	if err != nil {
		return 0, err
	}
	var n int64
	batch := sqlitePurgeFirstBatch
	for {
		if n > 0 {
			// The sign-ins' pages of the pause: the batch then starts the WAL
			// anew (see checkpointWAL).
			if err := checkpointWAL(ctx, db, time.Time{}, false); err != nil {
				return n, err
			}
		}
		for _, q := range reads {
			var found int64
			if err := onerow.Scan(db.Raw(q, now, batch), &found); err != nil {
				return n, fmt.Errorf("read ahead: %w", err)
			}
		}
		t0 := time.Now()
		r := db.Exec(del, now, batch)
		if r.Error != nil {
			return n, r.Error
		}
		took := time.Since(t0)
		n += r.RowsAffected
		if r.RowsAffected == 0 {
			return n, nil
		}
		until := time.Now().Add(max(took, sqlitePurgePause))
		if err := checkpointWAL(ctx, db, until, true); err != nil {
			return n, err
		}
		if r.RowsAffected < int64(batch) {
			return n, nil
		}
		batch = nextSQLiteBatch(batch, took)
		if err := sleepUntil(ctx, until); err != nil {
			return n, err
		}
	}
}

// prefetchSQL are the statements that read a batch's pages before it is
// deleted (see purgeSQLite): for each of table's indexes, a count of the
// batch's entries through that index, found by the index's first column
// (batchOf, with %s for that column: the batch's rows through the expires
// index, so the table's rows are read too). An index on an expression has
// no column to find its entries by and is left out.
func prefetchSQL(db *gorm.DB, table, batchOf string) ([]string, error) {
	var indexes []string
	if err := db.Raw("SELECT name FROM pragma_index_list(?)", table).Scan(&indexes).Error; err != nil {
		return nil, fmt.Errorf("indexes of %s: %w", table, err)
	}
	var reads []string
	for _, idx := range indexes {
		var col *string
		if err := onerow.Scan(db.Raw("SELECT name FROM pragma_index_info(?) WHERE seqno = 0", idx), &col); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", idx, err)
		}
		if col == nil {
			continue
		}
		reads = append(reads, "SELECT count(*) FROM "+table+" INDEXED BY "+quoteIdent(idx)+" WHERE "+quoteIdent(*col)+
			fmt.Sprintf(batchOf, quoteIdent(*col)))
	}
	return reads, nil
}

// quoteIdent is name as an SQLite identifier.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// nextSQLiteBatch is the size of the SQLite purge's batch after one of n
// rows that held the write lock for took (see sqlitePurgeTarget).
func nextSQLiteBatch(n int, took time.Duration) int {
	switch {
	case took > sqlitePurgeTarget:
		return max(n/2, sqlitePurgeMinBatch)
	case took < sqlitePurgeTarget/4:
		return min(n*2, sqlitePurgeBatch)
	}
	return n
}

// checkpointWAL copies the WAL into the database file with PASSIVE
// checkpoints, which wait for no reader nor writer and hold no lock a
// writer needs, retried every few milliseconds while readers of an older
// snapshot hold back part of it, until it is copied whole or until is
// reached. With wait false it tries once, at once.
//
// A writer that starts on a WAL copied whole (and that no reader still
// reads from) starts it again from the beginning: the purge's next batch,
// which checkpoints once just before it begins, mostly. That keeps the
// WAL short, so no sign-in's commit passes the auto-checkpoint threshold
// and copies the purge's pages, with two fsyncs, itself. (A RESTART
// checkpoint, which waits for the readers to leave the WAL, would restart
// it every time, but holds the write lock meanwhile and through its
// fsyncs: measured, up to 242 ms of a sign-in's wait.)
func checkpointWAL(ctx context.Context, db *gorm.DB, until time.Time, wait bool) error {
	for {
		if wait {
			// Readers that began before the batch's commit hold back its
			// frames; they are done in well under a millisecond unless
			// starved of CPU.
			if err := sleepUntil(ctx, time.Now().Add(5*time.Millisecond)); err != nil {
				return err
			}
		}
		var busy, frames, copied int
		if err := onerow.Scan(db.Raw("PRAGMA wal_checkpoint(PASSIVE)"), &busy, &frames, &copied); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		// busy is 1 when another checkpoint runs; frames is -1 then and when
		// the database is not in WAL mode.
		if !wait || busy == 0 && frames == copied || time.Now().After(until) {
			return nil
		}
	}
}

// sleepUntil waits until t, or returns ctx's error when it ends first.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// purgePostgres deletes table's rows that expired before now, in batches
// of postgresPurgeBatch, pausing as long as each batch took, and returns
// how many rows went.
//
// Each batch is found by its keys (= ANY: an index scan, where IN would
// hash-join the whole table) through the expires index, from the latest
// expiry the batch before deleted: a deleted row's index entry stays until
// no snapshot can see it, so under load each batch walked the entries of
// every batch before it again (80 % into a purge of 5×10⁴ sessions with a
// snapshot open, 40 547 buffers and 17 ms to find a batch; 502 and 0.4 ms
// from the last expiry). The bound is inclusive, as rows share an expiry;
// a row that expired before it but was written after the batch that passed
// it is left to the next purge.
func purgePostgres(ctx context.Context, db *gorm.DB, table, key string, now time.Time) (int64, error) {
	var n int64
	var from any // the expiry the last batch reached; nil before the first
	for {
		where, args := "expires < ?", []any{now, postgresPurgeBatch}
		if from != nil {
			where, args = "expires >= ? AND expires < ?", []any{from, now, postgresPurgeBatch}
		}
		t0 := time.Now()
		var batch int64
		var last any
		err := onerow.Scan(db.Raw("WITH gone AS (DELETE FROM "+table+" WHERE "+key+" = ANY(ARRAY(SELECT "+key+" FROM "+table+
			" WHERE "+where+" ORDER BY expires LIMIT ?)) RETURNING expires) SELECT count(*), max(expires) FROM gone", args...),
			&batch, &last)
		if err != nil {
			return n, err
		}
		n += batch
		if batch < postgresPurgeBatch {
			return n, nil
		}
		from = last
		if err := sleepUntil(ctx, time.Now().Add(time.Since(t0))); err != nil {
			return n, err
		}
	}
}
