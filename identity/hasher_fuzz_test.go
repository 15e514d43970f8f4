package identity

import "testing"

// FuzzVerify feeds Verify arbitrary stored hashes and passwords: it must never panic and
// must answer one of its three results. The seed corpus (testdata/fuzz/FuzzVerify) holds the
// ASP.NET Core vectors and truncated and corrupted forms of them. The hasher verifies at
// most 5,000 iterations so that each input is quick.
func FuzzVerify(f *testing.F) {
	f.Add(v3SHA512Iter50Salt128Sub128, vectorPassword)
	f.Add(v3SHA1Iter250Salt128Sub128, "")
	f.Add(v2SHA1Iter1000Salt128Sub256, vectorPassword)
	h, err := NewPasswordHasher(&PasswordHasherOptions{Iterations: 1000, MaxIterations: 5000})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, hashed, password string) {
		switch got := h.Verify(hashed, password); got {
		case VerificationFailed, VerificationSuccess, VerificationSuccessRehashNeeded:
		default:
			t.Fatalf("Verify(%q, %q) = %v", hashed, password, got)
		}
	})
}
