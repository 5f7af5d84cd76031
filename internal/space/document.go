package space

// What a space run records beside the scan's Result: the experiment layer
// fills these, the store keeps them, the CLI and the report show them.

// LiveNote is the caveat shown beside figures read from data in use: a
// mounted device (Result.Live) or a running server's data directory.
const LiveNote = "the data may have changed while it was read: the figures are of a possibly inconsistent snapshot"

// Document is a space run's document: the scan's Result, and what the run
// adds to it.
type Document struct {
	Result
	LiveNote string  `json:"live_note,omitempty"` // LiveNote, when the data was in use
	Actual   *Actual `json:"actual,omitempty"`    // what a file system really stored of the target, when known
}

// Actual is what a file system really stored of the scanned data by its
// own account (an emulated tier's btrfs through compsize), set beside the
// estimate; the scan does not measure it.
type Actual struct {
	FS           string  `json:"fs"`                 // "btrfs", "ext4"
	Compress     string  `json:"compress"`           // its inline compression: "zstd", "lzo", "none"
	Tool         string  `json:"tool"`               // what reported the figures: "compsize", "stat"
	Uncompressed int64   `json:"uncompressed_bytes"` // the data before compression
	Disk         int64   `json:"disk_bytes"`         // the space it takes
	Ratio        float64 `json:"ratio"`              // Uncompressed / Disk
}

// Check is what Scan refuses before reading anything, without walking a
// directory: options out of range and a target that is missing,
// unreadable, or neither a directory, a regular file nor a block device;
// the errors wrap ErrBadInput. It fills in o's defaults (block size,
// keep-below), so a run can record them before the scan starts.
func Check(target string, o *Options) error {
	d, err := o.withDefaults()
	if err != nil {
		return err
	}
	if _, err := checkTarget(target); err != nil {
		return err
	}
	o.BlockSize, o.KeepBelow = d.BlockSize, d.KeepBelow
	return nil
}
