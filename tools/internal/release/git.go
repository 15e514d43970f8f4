package release

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"slices"
	"strings"
	"time"

	modzip "golang.org/x/mod/zip"
)

// Git runs Git in dir and returns its standard output.
func Git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// repoRoot returns the top directory of the git working tree that holds dir.
func repoRoot(ctx context.Context, dir string) (string, error) {
	out, err := Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// workingFiles lists the files under subdir (relative to the repository root top) that the
// next commit would hold: tracked files still present and untracked files git does not
// ignore. Build output and caches, which .gitignore lists, are left out, as they are from the
// module a tag publishes.
func workingFiles(ctx context.Context, top, subdir string) ([]string, error) {
	out, err := Git(ctx, top, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", subdir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// commitTime returns the time of a commit, the time a proxy gives the version tagged there.
func commitTime(ctx context.Context, top, rev string) (time.Time, error) {
	out, err := Git(ctx, top, "log", "-1", "--format=%cI", rev)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	if err != nil {
		return time.Time{}, fmt.Errorf("git log: commit time %q: %v", out, err)
	}
	return t.UTC(), nil
}

// filesAtRevision returns the files of the module in subdir as the go command takes them
// from a tag: what "git archive" puts under subdir at rev, plus the repository's LICENSE when
// subdir has none (see the go command's modfetch, and zip.CreateFromVCS, which does the same
// but not in a linked worktree).
func filesAtRevision(ctx context.Context, top, rev, subdir string) ([]modzip.File, error) {
	archive, err := Git(ctx, top, "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=zip", rev, "--", subdir)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		return nil, err
	}
	var files []modzip.File
	haveLicense := false
	for _, zf := range zr.File {
		name, ok := strings.CutPrefix(zf.Name, subdir+"/")
		if !ok || name == "" || strings.HasSuffix(name, "/") {
			continue
		}
		files = append(files, zipEntry{name, zf})
		haveLicense = haveLicense || name == "LICENSE"
	}
	if !haveLicense {
		if license, err := Git(ctx, top, "cat-file", "blob", rev+":LICENSE"); err == nil {
			files = append(files, dataFile{"LICENSE", license})
		}
	}
	return files, nil
}

type zipEntry struct {
	name string
	f    *zip.File
}

func (z zipEntry) Path() string                 { return z.name }
func (z zipEntry) Lstat() (fs.FileInfo, error)  { return z.f.FileInfo(), nil }
func (z zipEntry) Open() (io.ReadCloser, error) { return z.f.Open() }

type dataFile struct {
	name string
	data []byte
}

func (d dataFile) Path() string                 { return d.name }
func (d dataFile) Lstat() (fs.FileInfo, error)  { return dataInfo{d}, nil }
func (d dataFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(d.data)), nil }

type dataInfo struct{ d dataFile }

func (i dataInfo) Name() string       { return path.Base(i.d.name) }
func (i dataInfo) Size() int64        { return int64(len(i.d.data)) }
func (i dataInfo) Mode() fs.FileMode  { return 0o644 }
func (i dataInfo) ModTime() time.Time { return time.Time{} }
func (i dataInfo) IsDir() bool        { return false }
func (i dataInfo) Sys() any           { return nil }
