package backup

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// A password in mariadb-backup's option file reads back exactly, whatever
// it holds: my_print_defaults parses the file as mariadb-backup does.
func TestOptionValue(t *testing.T) {
	tool, err := exec.LookPath("my_print_defaults")
	if err != nil {
		testenv.SkipOrFail(t, "my_print_defaults (mariadb-server): %v", err)
	}
	for _, pw := range []string{"plain", `a"b'c\d`, "# not a comment", " spaces ", "tab\there", "new\nline", `\n literally`,
		"semi;colon=eq", "ünï", `ends with \`, `"`, "'quoted'", "\\s"} {
		file := filepath.Join(t.TempDir(), "o.cnf")
		if err := os.WriteFile(file, []byte("[mariadb-backup]\npassword = "+optionValue(pw)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool, "--defaults-file="+file, "mariadb-backup").Output()
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSuffix(string(out), "\n")
		if got != "--password="+pw {
			t.Errorf("password %q reads back as %q", pw, got)
		}
	}
}

func TestSplitCreate(t *testing.T) {
	create := "CREATE TABLE `customer` (\n" +
		"  `c_id` int(11) NOT NULL,\n" +
		"  `c_last` varchar(16) NOT NULL,\n" +
		"  `c_ref` int(11) DEFAULT NULL,\n" +
		"  PRIMARY KEY (`c_id`),\n" +
		"  UNIQUE KEY `u` (`c_last`,`c_id`),\n" +
		"  KEY `customer_last_idx` (`c_last`),\n" +
		"  FULLTEXT KEY `ft` (`c_last`),\n" +
		"  CONSTRAINT `fk``x` FOREIGN KEY (`c_ref`) REFERENCES `customer` (`c_id`),\n" +
		"  CONSTRAINT `chk` CHECK (`c_id` > 0)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	got, later := splitCreate(create)
	want := "CREATE TABLE `customer` (\n" +
		"  `c_id` int(11) NOT NULL,\n" +
		"  `c_last` varchar(16) NOT NULL,\n" +
		"  `c_ref` int(11) DEFAULT NULL,\n" +
		"  PRIMARY KEY (`c_id`),\n" +
		"  FULLTEXT KEY `ft` (`c_last`),\n" +
		"  CONSTRAINT `chk` CHECK (`c_id` > 0)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	wantLater := []string{"ADD UNIQUE KEY `u` (`c_last`,`c_id`)", "ADD KEY `customer_last_idx` (`c_last`)",
		"ADD CONSTRAINT `fk``x` FOREIGN KEY (`c_ref`) REFERENCES `customer` (`c_id`)"}
	if got != want || !slices.Equal(later, wantLater) {
		t.Errorf("splitCreate:\n%s\n%q", got, later)
	}

	// An AUTO_INCREMENT column whose only index is a secondary one, and a
	// definition it does not know: whole.
	for _, c := range []string{
		"CREATE TABLE `t` (\n  `a` int NOT NULL,\n  `id` int NOT NULL AUTO_INCREMENT,\n  PRIMARY KEY (`a`),\n  KEY `k` (`id`)\n) ENGINE=InnoDB",
		"CREATE TABLE `t` (\n  `a` int NOT NULL,\n  SOMETHING NEW (`a`),\n  KEY `k` (`a`)\n) ENGINE=InnoDB",
		"CREATE TABLE `t` (\n  `a` int NOT NULL,\n  PRIMARY KEY (`a`)\n) ENGINE=InnoDB",
	} {
		if got, later := splitCreate(c); got != c || later != nil {
			t.Errorf("splitCreate(%q) = %q, %q; want it whole", c, got, later)
		}
	}
	// An AUTO_INCREMENT primary key: split.
	c := "CREATE TABLE `t` (\n  `id` int NOT NULL AUTO_INCREMENT,\n  `b` int,\n  PRIMARY KEY (`id`),\n  KEY `k` (`b`)\n) ENGINE=InnoDB AUTO_INCREMENT=6"
	if got, later := splitCreate(c); strings.Contains(got, "KEY `k`") || len(later) != 1 {
		t.Errorf("splitCreate(%q) = %q, %q", c, got, later)
	}
}

// The DEFINER clause of every kind of SHOW CREATE goes, and nothing else.
func TestDefiner(t *testing.T) {
	for in, want := range map[string]string{
		"CREATE DEFINER=`tierbench`@`localhost` PROCEDURE `neword`(x int)\nBEGIN SELECT 'DEFINER=`a`@`b` '; END": "CREATE PROCEDURE `neword`(x int)\nBEGIN SELECT 'DEFINER=`a`@`b` '; END",
		"CREATE ALGORITHM=UNDEFINED DEFINER=`u``x`@`%` SQL SECURITY DEFINER VIEW `v` AS select 1":                "CREATE ALGORITHM=UNDEFINED SQL SECURITY DEFINER VIEW `v` AS select 1",
		"CREATE DEFINER=`role1` TRIGGER t AFTER INSERT ON o FOR EACH ROW SET @a = 1":                             "CREATE TRIGGER t AFTER INSERT ON o FOR EACH ROW SET @a = 1",
		"CREATE PROCEDURE p() SELECT 1": "CREATE PROCEDURE p() SELECT 1",
	} {
		if got := withoutDefiner(in); got != want {
			t.Errorf("withoutDefiner(%q) = %q; want %q", in, got, want)
		}
	}
}
