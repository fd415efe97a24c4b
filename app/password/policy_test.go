package password_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/latchkey-auth/latchkey/app/password"
)

func TestPolicy(t *testing.T) {
	p := password.NewPolicy()
	require.Equal(t, 11611, p.CommonCount(), "the lines of common-passwords.txt")

	cases := []struct {
		name, pw, email string
		want            error
	}{
		{"seven characters", "abcdefg", "", password.ErrTooShort},
		{"eight characters", "zq8#lk2m", "", nil},
		{"128 characters", strings.Repeat("é", 128), "", nil},
		{"129 characters", strings.Repeat("é", 129), "", password.ErrTooLong},
		// 8 runes only after NFKC: "ﬀ" (U+FB00) becomes "ff", so 4 ligatures are 8 characters.
		{"NFKC expands to 8", "ﬀﬀﬀﬀ", "", nil},
		{"spaces and emoji", "🙂 my dog rex 🙂", "", nil},
		{"no composition rules", "allowercasewordsplease", "", nil},
		{"common", "password1", "", password.ErrCommon},
		{"common, any case", "PassWord1", "", password.ErrCommon},
		{"common, after NFKC", "ｐａｓｓｗｏｒｄ１", "", password.ErrCommon}, // full-width
		{"the list's first entry", "PASSWORD", "", password.ErrCommon},
		{"the list's last entry", "11234567", "", password.ErrCommon},
		{"the end of an entry only", "wertyuiop", "", nil},    // qwertyuiop is listed
		{"the start of an entry only", "qwertyuio1", "", nil}, // qwertyuio is listed
		{"two entries across a newline", "password\n12345678", "", nil},
		{"the e-mail", "Alice.Smith@Example.com", "alice.smith@example.com", password.ErrEqualsEmail},
		{"the local part", "alice.smith", "Alice.Smith@example.com", password.ErrEqualsEmail},
		{"contains the local part", "alice.smith is here", "alice.smith@example.com", nil},
		{"NUL", "abcdefgh\x00", "", password.ErrNUL},
		{"malformed UTF-8", "abcdefgh\xc3\x28", "", password.ErrInvalidUTF8},
		{"1 MB", strings.Repeat("x", 1<<20), "", password.ErrInputTooBig},
		{"empty", "", "", password.ErrEmpty},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := p.Check(c.pw, c.email)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.want)
		})
	}
}

func TestPolicyListHasTheMostCommonLongPasswords(t *testing.T) {
	p := password.NewPolicy()
	for _, pw := range []string{"password", "12345678", "iloveyou", "sunshine", "qwertyuiop", "baseball"} {
		require.ErrorIs(t, p.Check(pw, ""), password.ErrCommon, pw)
	}
}
