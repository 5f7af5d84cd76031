package server

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/tierbench/tierbench/internal/systool"
)

// ServiceUser is the system user a managed server runs as when tierbench runs
// as root: PostgreSQL refuses to run as root.
const ServiceUser = "tierbench"

// account is who runs initdb, pg_ctl and postgres.
type account struct {
	name     string
	uid, gid uint32
	// switchTo is set when tierbench runs as root and starts its children as
	// this (unprivileged) user.
	switchTo bool
}

func currentAccount() account {
	a := account{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}
	a.name = strconv.Itoa(int(a.uid))
	if u, err := user.Current(); err == nil {
		a.name = u.Username
	}
	return a
}

func accountFromUser(u *user.User) (account, error) {
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return account{}, fmt.Errorf("user %s has a uid/gid that is not numeric", u.Username)
	}
	if uid == 0 {
		return account{}, fmt.Errorf("user %s is root; PostgreSQL refuses to run as root", u.Username)
	}
	return account{name: u.Username, uid: uint32(uid), gid: uint32(gid), switchTo: true}, nil
}

// serviceAccount is the account a new data directory is created for: the
// current user, or when root the ServiceUser (created on first use; the
// postgres user when useradd is not available).
func serviceAccount(ctx context.Context) (account, error) {
	if os.Geteuid() != 0 {
		return currentAccount(), nil
	}
	if u, err := user.Lookup(ServiceUser); err == nil {
		return accountFromUser(u)
	}
	var createErr error
	if useradd, err := systool.LookPath("useradd"); err == nil { // in /usr/sbin, off PATH after a plain su
		out, err := exec.CommandContext(ctx, useradd, "--system", "--user-group", "--no-create-home",
			"--shell", "/usr/sbin/nologin", ServiceUser).CombinedOutput()
		// Look up again even on failure: another tierbench may have created it.
		if u, lerr := user.Lookup(ServiceUser); lerr == nil {
			return accountFromUser(u)
		}
		createErr = fmt.Errorf("useradd %s: %v: %s", ServiceUser, err, strings.TrimSpace(string(out)))
	} else {
		createErr = fmt.Errorf("useradd is not available")
	}
	if u, err := user.Lookup("postgres"); err == nil {
		return accountFromUser(u)
	}
	return account{}, fmt.Errorf("running as root, and PostgreSQL refuses to run as root: could not create the system user %s (%v) and there is no postgres user; create an unprivileged user %s or run tierbench as a normal user",
		ServiceUser, createErr, ServiceUser)
}

// ownerAccount is the account that owns an existing data directory; when root,
// the server is run as that owner.
func ownerAccount(dir string) (account, error) {
	if os.Geteuid() != 0 {
		return currentAccount(), nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return account{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return account{}, fmt.Errorf("cannot read the owner of %s", dir)
	}
	if st.Uid == 0 {
		return account{}, fmt.Errorf("data directory %s is owned by root; PostgreSQL refuses to run as root", dir)
	}
	a := account{name: strconv.Itoa(int(st.Uid)), uid: st.Uid, gid: st.Gid, switchTo: true}
	if u, err := user.LookupId(strconv.Itoa(int(st.Uid))); err == nil {
		a.name = u.Username
		if gid, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			a.gid = uint32(gid)
		}
	}
	return a, nil
}

// command prepares a child process run as a: with a's credentials when
// switching from root, in "/" (root's working directory may be closed to a),
// and without the PG* variables of our environment, which would otherwise
// steer the tools.
func (a account) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = "/"
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if a.switchTo {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid}}
	}
	return cmd
}

// chown gives path to a when tierbench switches users; otherwise the files
// are already ours.
func (a account) chown(path string) error {
	if !a.switchTo {
		return nil
	}
	return os.Chown(path, int(a.uid), int(a.gid))
}

// chownTree gives everything under dir to a.
func (a account) chownTree(dir string) error {
	if !a.switchTo {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(a.uid), int(a.gid))
	})
}

// checkReachable makes sure a can walk down to dir: every existing parent must
// grant it search (execute) permission through the owner, group or other bits.
func (a account) checkReachable(dir string) error {
	if !a.switchTo {
		return nil // our own user: initdb reports what it cannot reach
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !a.canSearch(fi) {
				return &DataDirError{Dir: dir, Problem: fmt.Sprintf(
					"is not reachable by user %s: %s is not searchable; use a directory under a world-searchable path (e.g. /var/tmp)",
					a.name, p)}
			}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func (a account) canSearch(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == a.uid:
		return perm&0o100 != 0
	case st.Gid == a.gid:
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}
