package transport

import (
	"strings"
	"testing"
)

// TestBuildEnvWindows: on Windows the allow-list adds what programs need
// there, and names match without regard to case (Windows spells PATH
// "Path"); on Linux the same environment passes only the Unix list, with
// case kept.
func TestBuildEnvWindows(t *testing.T) {
	environ := []string{
		`=C:=C:\work`, `Path=C:\Windows;C:\node`, `PATHEXT=.COM;.EXE;.CMD`, `SystemRoot=C:\Windows`,
		`ComSpec=C:\Windows\system32\cmd.exe`, `APPDATA=C:\Users\ada\AppData\Roaming`,
		`LocalAppData=C:\Users\ada\AppData\Local`, `USERPROFILE=C:\Users\ada`, `TEMP=C:\Temp`,
		`GITHUB_TOKEN=secret`, `Aws_Key=k`, `lc_all=C`,
	}
	got, err := buildEnv("windows", environ, []string{"AWS_KEY"}, []string{`PATH=C:\only`, `New=1`})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`PATH=C:\only`, `PATHEXT=.COM;.EXE;.CMD`, `SystemRoot=C:\Windows`,
		`ComSpec=C:\Windows\system32\cmd.exe`, `APPDATA=C:\Users\ada\AppData\Roaming`,
		`LocalAppData=C:\Users\ada\AppData\Local`, `USERPROFILE=C:\Users\ada`, `TEMP=C:\Temp`,
		`Aws_Key=k`, `lc_all=C`, `New=1`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("windows:\ngot  %q\nwant %q", got, want)
	}

	got, _ = buildEnv("linux", environ, []string{"AWS_KEY"}, nil)
	if len(got) != 0 {
		t.Errorf("linux: %q, want nothing (names are case-sensitive, the Windows ones are not listed)", got)
	}
	got, _ = buildEnv("darwin", []string{"PATH=/bin", "SystemRoot=x", "TMPDIR=/t"}, nil, nil)
	if strings.Join(got, " ") != "PATH=/bin TMPDIR=/t" {
		t.Errorf("darwin: %q", got)
	}
}
