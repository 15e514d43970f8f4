package identity

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/unified-data/gotables/abstractions"
)

// The vectors below are ASP.NET Core Identity's own, from dotnet/aspnetcore,
// src/Identity/test/Identity.Test/PasswordHasherTest.cs (the constants at the top of
// PasswordHasherTest and the InlineData of VerifyHashedPassword_FailureCases): each is a hash
// of the password "my password". The hashes that ASP.NET Core produces itself (V2 and the
// .NET 7+ V3 default) were made with a random source that yields 0x00, 0x01, 0x02, …, which
// sequence reproduces.
const vectorPassword = "my password"

const (
	v2SHA1Iter1000Salt128Sub256   = "AAABAgMEBQYHCAkKCwwNDg+ukCEMDf0yyQ29NYubggHIVY0sdEUfdyeM+E1LtH1uJg=="
	v3SHA1Iter250Salt128Sub128    = "AQAAAAAAAAD6AAAAEAhftMyfTJylOlZT+eEotFXd1elee8ih5WsjXaR3PA9M"
	v3SHA256Iter250kSalt256Sub256 = "AQAAAAEAA9CQAAAAIESkQuj2Du8Y+kbc5lcN/W/3NiAZFEm11P27nrSN5/tId+bR1SwV8CO1Jd72r4C08OLvplNlCDc3oQZ8efcW+jQ="
	v3SHA512Iter50Salt128Sub128   = "AQAAAAIAAAAyAAAAEOMwvh3+FZxqkdMBz2ekgGhwQ4B6pZWND6zgESBuWiHw"
	v3SHA512Iter250Salt256Sub512  = "AQAAAAIAAAD6AAAAIJbVi5wbMR+htSfFp8fTw8N8GOS/Sje+S/4YZcgBfU7EQuqv4OkVYmc4VJl9AGZzmRTxSkP7LtVi9IWyUxX8IAAfZ8v+ZfhjCcudtC1YERSqE1OEdXLW9VukPuJWBBjLuw=="
	v3SHA512Iter10kSalt128Sub256  = "AQAAAAIAACcQAAAAEAABAgMEBQYHCAkKCwwNDg9B0Oxwty+PGIDSp95gcCfzeDvA4sGapUIUov8usXfD6A=="
	v3SHA512Iter100kSalt128Sub256 = "AQAAAAIAAYagAAAAEAABAgMEBQYHCAkKCwwNDg/Q8A0WMKbtHQJQ2DHCdoEeeFBrgNlldq6vH4qX/CGqGQ=="
)

// sequence is the random source of ASP.NET Core's tests: 0x00, 0x01, 0x02, …
type sequence struct{ next byte }

func (s *sequence) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = s.next
		s.next++
	}
	return len(p), nil
}

func hasher(t testing.TB, opts *PasswordHasherOptions) *PasswordHasher {
	t.Helper()
	h, err := NewPasswordHasher(opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHashReproducesASPNETCore(t *testing.T) {
	cases := []struct {
		name string
		mode CompatibilityMode
		want string
	}{
		{"v3 default", IdentityV3, v3SHA512Iter100kSalt128Sub256},
		{"v2", IdentityV2, v2SHA1Iter1000Salt128Sub256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := hasher(t, &PasswordHasherOptions{Compatibility: tc.mode, Rand: &sequence{}})
			got, err := h.Hash(vectorPassword)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Hash = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestVerifyVectors(t *testing.T) {
	cases := []struct {
		name   string
		hash   string
		v3, v2 PasswordVerification
	}{
		{"v2 sha1 1000", v2SHA1Iter1000Salt128Sub256, VerificationSuccessRehashNeeded, VerificationSuccess},
		{"v3 sha1 250", v3SHA1Iter250Salt128Sub128, VerificationSuccessRehashNeeded, VerificationSuccessRehashNeeded},
		{"v3 sha256 250000", v3SHA256Iter250kSalt256Sub256, VerificationSuccessRehashNeeded, VerificationSuccessRehashNeeded},
		{"v3 sha512 50", v3SHA512Iter50Salt128Sub128, VerificationSuccessRehashNeeded, VerificationSuccess},
		{"v3 sha512 250 salt256 sub512", v3SHA512Iter250Salt256Sub512, VerificationSuccessRehashNeeded, VerificationSuccess},
		{"v3 sha512 10000", v3SHA512Iter10kSalt128Sub256, VerificationSuccessRehashNeeded, VerificationSuccess},
		{"v3 sha512 100000", v3SHA512Iter100kSalt128Sub256, VerificationSuccess, VerificationSuccess},
	}
	v3, v2 := hasher(t, nil), hasher(t, &PasswordHasherOptions{Compatibility: IdentityV2})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := v3.Verify(tc.hash, vectorPassword); got != tc.v3 {
				t.Errorf("V3 hasher: %v, want %v", got, tc.v3)
			}
			if got := v2.Verify(tc.hash, vectorPassword); got != tc.v2 {
				t.Errorf("V2 hasher: %v, want %v", got, tc.v2)
			}
			if got := v3.Verify(tc.hash, "my passwore"); got != VerificationFailed {
				t.Errorf("another password: %v, want VerificationFailed", got)
			}
		})
	}
}

func TestVerifyFailureVectors(t *testing.T) {
	cases := []struct{ name, hash string }{
		// ASP.NET Core's VerifyHashedPassword_FailureCases.
		{"v2 incorrect password", "AAABAgMEBQYHCAkKCwwNDg+uAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAALtH1uJg=="},
		{"v2 too short", "AAABAgMEBQYHCAkKCwwNDg+ukCEMDf0yyQ29NYubggE="},
		{"v2 extra data at end", "AAABAgMEBQYHCAkKCwwNDg+ukCEMDf0yyQ29NYubggHIVY0sdEUfdyeM+E1LtH1uJgAAAAAAAAAAAAA="},
		{"v3 incorrect password", "AQAAAAAAAAD6AAAAEAhftMyfTJyAAAAAAAAAAAAAAAAAAAih5WsjXaR3PA9M"},
		{"v3 too short", "AQAAAAIAAAAyAAAAEOMwvh3+FZxqkdMBz2ekgGhwQ4A="},
		{"v3 extra data at end", "AQAAAAIAAAAyAAAAEOMwvh3+FZxqkdMBz2ekgGhwQ4B6pZWND6zgESBuWiHwAAAAAAAAAAAA"},
		// Malformed input of our own: never a panic, always a failed check.
		{"empty", ""},
		{"not base64", "not base64!"},
		{"unknown marker", base64.StdEncoding.EncodeToString([]byte{0x02, 1, 2, 3})},
		{"marker only", "AQ=="},
		{"truncated header", base64.StdEncoding.EncodeToString([]byte{0x01, 0, 0, 0, 2, 0, 0})},
		{"unknown prf", v3With(3, 1000, 16, 32)},
		{"zero iterations", v3With(prfSHA512, 0, 16, 32)},
		{"negative iterations in .NET", v3With(prfSHA512, 0x80000000, 16, 32)},
		{"too many iterations", v3With(prfSHA512, DefaultMaxIterations+1, 16, 32)},
		{"short salt", v3With(prfSHA512, 1000, 15, 32)},
		{"salt longer than the payload", v3With(prfSHA512, 1000, 1<<31, 32)},
		{"short subkey", v3With(prfSHA512, 1000, 16, 15)},
	}
	h := hasher(t, nil)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := h.Verify(tc.hash, vectorPassword); got != VerificationFailed {
				t.Errorf("Verify = %v, want VerificationFailed", got)
			}
		})
	}
}

// v3With builds a version 3 payload with the header fields given and zero salt and subkey
// bytes (subLen of them after a 16-byte salt, or after saltLen bytes when that is small).
func v3With(prf, iter, saltLen uint32, subLen int) string {
	b := make([]byte, 13)
	b[0] = 1
	binary.BigEndian.PutUint32(b[1:], prf)
	binary.BigEndian.PutUint32(b[5:], iter)
	binary.BigEndian.PutUint32(b[9:], saltLen)
	n := int(min(saltLen, 16)) + subLen
	return base64.StdEncoding.EncodeToString(append(b, make([]byte, n)...))
}

// TestHashFormat checks a produced hash by the format's rules alone: decode the header,
// recompute PBKDF2 with what it says, compare.
func TestHashFormat(t *testing.T) {
	h := hasher(t, &PasswordHasherOptions{Iterations: 1234})
	for _, pw := range []string{"", "p", "pässwörd ✓", strings.Repeat("long", 100)} {
		s, err := h.Hash(pw)
		if err != nil {
			t.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 13+16+32 || b[0] != 1 {
			t.Fatalf("%q: %d bytes, marker %d", pw, len(b), b[0])
		}
		prf, iter, saltLen := binary.BigEndian.Uint32(b[1:]), binary.BigEndian.Uint32(b[5:]), binary.BigEndian.Uint32(b[9:])
		if prf != 2 || iter != 1234 || saltLen != 16 {
			t.Fatalf("%q: header prf=%d iter=%d salt=%d, want 2 1234 16", pw, prf, iter, saltLen)
		}
		sub, err := pbkdf2.Key(sha512.New, pw, b[13:29], int(iter), 32)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sub, b[29:]) {
			t.Fatalf("%q: the subkey is not PBKDF2-HMAC-SHA512 of the password and salt", pw)
		}
		if got := h.Verify(s, pw); got != VerificationSuccess {
			t.Fatalf("%q: own hash verifies as %v", pw, got)
		}
		if got := hasher(t, nil).Verify(s, pw); got != VerificationSuccessRehashNeeded {
			t.Fatalf("%q: a hasher with more iterations says %v", pw, got)
		}
	}
	a, _ := h.Hash("same")
	b, _ := h.Hash("same")
	if a == b {
		t.Error("two hashes of one password share a salt")
	}
}

func TestVerifyIgnoresWhiteSpace(t *testing.T) {
	s := v3SHA512Iter50Salt128Sub128[:20] + "\r\n " + v3SHA512Iter50Salt128Sub128[20:]
	if got := hasher(t, nil).Verify(s, vectorPassword); got != VerificationSuccessRehashNeeded {
		t.Errorf("Verify = %v", got)
	}
}

func TestNewPasswordHasherRefuses(t *testing.T) {
	for _, o := range []PasswordHasherOptions{
		{Compatibility: 7}, {Iterations: -1}, {MaxIterations: -1}, {Iterations: 2000, MaxIterations: 1000},
	} {
		if _, err := NewPasswordHasher(&o); !errors.Is(err, abstractions.ErrInvalidArgument) {
			t.Errorf("%+v: %v, want ErrInvalidArgument", o, err)
		}
	}
}

func TestHashFailsWithItsSource(t *testing.T) {
	h := hasher(t, &PasswordHasherOptions{Rand: strings.NewReader("short")})
	if _, err := h.Hash("x"); err == nil {
		t.Error("a salt source that runs dry did not fail Hash")
	}
}

func BenchmarkVerifyDefault(b *testing.B) {
	h := hasher(b, nil)
	for b.Loop() {
		h.Verify(v3SHA512Iter100kSalt128Sub256, vectorPassword)
	}
}
