package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename, so a reader never sees half a file and an
// interrupted write leaves the previous file intact.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// WriteJSON writes v as indented JSON, atomically.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// ReadRun reads a run written by knee run --output.
func ReadRun(path string) (*Run, error) {
	var r Run
	if err := readVersioned(path, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// readVersioned decodes a knee JSON file, refusing damaged files and files
// of another schema version with an error that names the file.
func readVersioned(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: not a knee result file (damaged JSON: %v)", path, err)
	}
	if head.SchemaVersion == nil {
		return fmt.Errorf("%s: not a knee result file (no schema_version)", path)
	}
	if *head.SchemaVersion != SchemaVersion {
		return fmt.Errorf("%s: schema version %d, this knee reads version %d", path, *head.SchemaVersion, SchemaVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
