package identity

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"math"
	"strings"

	"github.com/unified-data/gotables/abstractions"
)

// PasswordVerification is the result of PasswordHasher.Verify.
type PasswordVerification uint8

const (
	// VerificationFailed means the password does not match, or the stored hash is not one
	// the hasher can read.
	VerificationFailed PasswordVerification = iota
	// VerificationSuccess means the password matches.
	VerificationSuccess
	// VerificationSuccessRehashNeeded means the password matches a hash in a weaker format
	// than the hasher produces: hash the password again and store the new hash.
	VerificationSuccessRehashNeeded
)

// String returns the result's name.
func (v PasswordVerification) String() string {
	switch v {
	case VerificationFailed:
		return "VerificationFailed"
	case VerificationSuccess:
		return "VerificationSuccess"
	case VerificationSuccessRehashNeeded:
		return "VerificationSuccessRehashNeeded"
	}
	return "PasswordVerification(?)"
}

// CompatibilityMode is the format a PasswordHasher produces.
type CompatibilityMode uint8

const (
	// IdentityV3 produces version 3 hashes: PBKDF2 with HMAC-SHA512, a 128-bit salt, a
	// 256-bit subkey and the configured iterations. The default.
	IdentityV3 CompatibilityMode = iota
	// IdentityV2 produces version 2 hashes (PBKDF2 with HMAC-SHA1, 1,000 iterations), for
	// sharing users with hosts older than ASP.NET Core Identity 3. Do not use it otherwise.
	IdentityV2
)

// The PBKDF2 pseudo-random functions of the version 3 format, as ASP.NET Core's
// KeyDerivationPrf numbers them in the header.
const (
	prfSHA1   = 0
	prfSHA256 = 1
	prfSHA512 = 2
)

// DefaultIterations is the PBKDF2 iteration count of the hashes a PasswordHasher produces,
// ASP.NET Core Identity's default since .NET 7.
const DefaultIterations = 100_000

// DefaultMaxIterations is the most PBKDF2 iterations a stored hash may ask for; see
// PasswordHasherOptions.MaxIterations.
const DefaultMaxIterations = 10_000_000

const (
	saltSize   = 128 / 8
	subkeySize = 256 / 8
	v2Iter     = 1000
	v3Header   = 13 // marker, PRF, iterations, salt length
)

// PasswordHasherOptions configure a PasswordHasher. A nil *PasswordHasherOptions, like the
// zero value, means the defaults.
type PasswordHasherOptions struct {
	// Compatibility is the format Hash produces: IdentityV3 (the default) or IdentityV2.
	Compatibility CompatibilityMode
	// Iterations is the PBKDF2 iteration count of the version 3 hashes Hash produces; 0
	// means DefaultIterations. A stored version 3 hash with fewer verifies as
	// VerificationSuccessRehashNeeded. A negative count is refused.
	Iterations int
	// MaxIterations is the most iterations a stored hash may ask for: one that asks for
	// more fails to verify instead of keeping a CPU busy for minutes (hashes stored by
	// ASP.NET Core use 100,000 or fewer). 0 means DefaultMaxIterations.
	MaxIterations int
	// Rand is the source of salts; nil means crypto/rand. Tests set it to reproduce a
	// known hash; a program leaves it nil.
	Rand io.Reader
}

// PasswordHasher hashes passwords in ASP.NET Core Identity's format and verifies hashes that
// ASP.NET Core Identity (version 2 or 3 format) or this package stored, so Go and .NET hosts
// can share users. It is safe for concurrent use.
//
// The stored form is the base64 text of one of:
//
//	version 2: 0x00, salt (16 bytes), subkey (32 bytes); PBKDF2-HMAC-SHA1, 1,000 iterations
//	version 3: 0x01, PRF (uint32), iterations (uint32), salt length (uint32), salt, subkey;
//	           the integers big-endian; PRF 0 = HMAC-SHA1, 1 = HMAC-SHA256, 2 = HMAC-SHA512
//
// The password's bytes are its UTF-8 text, as .NET encodes a string.
type PasswordHasher struct {
	mode    CompatibilityMode
	iter    int
	maxIter int
	rand    io.Reader
}

// NewPasswordHasher returns a hasher with the options (nil for the defaults). An unknown
// compatibility mode or a negative iteration count is refused with an error matching
// abstractions.ErrInvalidArgument.
func NewPasswordHasher(opts *PasswordHasherOptions) (*PasswordHasher, error) {
	o := PasswordHasherOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Compatibility != IdentityV3 && o.Compatibility != IdentityV2 {
		return nil, fmt.Errorf("%w: unknown password hasher compatibility mode %d", abstractions.ErrInvalidArgument, o.Compatibility)
	}
	if o.Iterations < 0 || o.MaxIterations < 0 {
		return nil, fmt.Errorf("%w: the iteration counts must not be negative", abstractions.ErrInvalidArgument)
	}
	if o.Iterations == 0 {
		o.Iterations = DefaultIterations
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = DefaultMaxIterations
	}
	if o.Iterations > o.MaxIterations || o.Iterations > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d iterations is more than the hasher verifies (MaxIterations %d)", abstractions.ErrInvalidArgument,
			o.Iterations, o.MaxIterations)
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	h := &PasswordHasher{mode: o.Compatibility, iter: o.Iterations, maxIter: o.MaxIterations, rand: o.Rand}
	if h.mode == IdentityV2 {
		h.iter = 0 // as in ASP.NET Core: a V2 hasher asks no version 3 hash to be redone for its count
	}
	return h, nil
}

// Hash returns the stored form of password: a version 3 hash (or version 2 in IdentityV2
// mode) with a new random salt. It fails only when the salt source fails.
func (h *PasswordHasher) Hash(password string) (string, error) {
	salt := make([]byte, saltSize)
	if _, err := io.ReadFull(h.rand, salt); err != nil {
		return "", fmt.Errorf("identity: reading a salt: %w", err)
	}
	if h.mode == IdentityV2 {
		sub, err := pbkdf2.Key(sha1.New, password, salt, v2Iter, subkeySize)
		if err != nil {
			return "", fmt.Errorf("identity: deriving the password's key: %w", err)
		}
		return base64.StdEncoding.EncodeToString(append(append([]byte{0x00}, salt...), sub...)), nil
	}
	sub, err := pbkdf2.Key(sha512.New, password, salt, h.iter, subkeySize)
	if err != nil {
		return "", fmt.Errorf("identity: deriving the password's key: %w", err)
	}
	out := make([]byte, v3Header, v3Header+saltSize+subkeySize)
	out[0] = 0x01
	binary.BigEndian.PutUint32(out[1:], prfSHA512)
	binary.BigEndian.PutUint32(out[5:], uint32(h.iter))
	binary.BigEndian.PutUint32(out[9:], saltSize)
	out = append(append(out, salt...), sub...)
	return base64.StdEncoding.EncodeToString(out), nil
}

// Verify reports whether password matches the stored hash: VerificationSuccess,
// VerificationSuccessRehashNeeded when it matches a weaker format (version 2, a version 3
// hash with HMAC-SHA1 or HMAC-SHA256, or fewer iterations than the hasher's), or
// VerificationFailed. A hash it cannot read (bad base64, an unknown marker, a short salt or
// subkey, a truncated header, too many iterations) fails; Verify never panics. The subkeys
// are compared in constant time.
func (h *PasswordHasher) Verify(hashedPassword, password string) PasswordVerification {
	// .NET's base64 decoder skips white space; do the same.
	b, err := base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, hashedPassword))
	if err != nil || len(b) == 0 {
		return VerificationFailed
	}
	switch b[0] {
	case 0x00:
		if !verifyV2(b, password) {
			return VerificationFailed
		}
		if h.mode == IdentityV3 {
			return VerificationSuccessRehashNeeded
		}
		return VerificationSuccess
	case 0x01:
		iter, prf, ok := h.verifyV3(b, password)
		switch {
		case !ok:
			return VerificationFailed
		case iter < h.iter, prf == prfSHA1, prf == prfSHA256:
			return VerificationSuccessRehashNeeded
		}
		return VerificationSuccess
	}
	return VerificationFailed
}

func verifyV2(b []byte, password string) bool {
	if len(b) != 1+saltSize+subkeySize {
		return false
	}
	sub, err := pbkdf2.Key(sha1.New, password, b[1:1+saltSize], v2Iter, subkeySize)
	return err == nil && subtle.ConstantTimeCompare(sub, b[1+saltSize:]) == 1
}

// verifyV3 checks a version 3 hash and returns its iteration count and PRF.
func (h *PasswordHasher) verifyV3(b []byte, password string) (iter int, prf uint32, ok bool) {
	if len(b) < v3Header {
		return 0, 0, false
	}
	prf = binary.BigEndian.Uint32(b[1:])
	it := binary.BigEndian.Uint32(b[5:])
	saltLen := uint64(binary.BigEndian.Uint32(b[9:]))
	var newHash func() hash.Hash
	switch prf {
	case prfSHA1:
		newHash = sha1.New
	case prfSHA256:
		newHash = sha256.New
	case prfSHA512:
		newHash = sha512.New
	default:
		return 0, 0, false
	}
	// The salt and the subkey must each be at least 128 bits, and the subkey is the rest.
	rest := uint64(len(b) - v3Header)
	if it == 0 || it > math.MaxInt32 || uint64(it) > uint64(h.maxIter) || saltLen < saltSize || saltLen > rest || rest-saltLen < 128/8 {
		return 0, 0, false
	}
	salt, want := b[v3Header:v3Header+saltLen], b[v3Header+saltLen:]
	sub, err := pbkdf2.Key(newHash, password, salt, int(it), len(want))
	if err != nil || subtle.ConstantTimeCompare(sub, want) != 1 {
		return 0, 0, false
	}
	return int(it), prf, true
}
