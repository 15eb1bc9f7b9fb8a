package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// JWTs: the client assertion of private_key_jwt (RFC 7523 §2.2, signed
// with the key of --oauth-private-key) and the expiry of the identity
// assertion and the ID-JAG of cross-app access, read without verifying
// them (sonde is not their audience). Signing and parsing go through
// go-jose: no hand-written JOSE.

// AssertionLifetime is how long a client assertion sonde signs is valid:
// it is made for one token request.
const AssertionLifetime = time.Minute

// ErrKeyType is the cause of an Error about a private key sonde cannot
// sign client assertions with: not a private key, an RSA key under 2048
// bits, a curve other than P-256, P-384 and P-521, or a key whose
// algorithm the authorization server does not list.
var ErrKeyType = errors.New("unusable private key")

// ErrExpired is the cause of an Error about an assertion past its exp.
var ErrExpired = errors.New("assertion expired")

// ParsePrivateKey reads the private key of private_key_jwt from PEM: a
// PKCS #8 "PRIVATE KEY" (EC, RSA or Ed25519), an "EC PRIVATE KEY" (SEC 1)
// or an "RSA PRIVATE KEY" (PKCS #1). Errors wrap ErrKeyType; they never
// show the key.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block found (want a PEM private key: PKCS #8, SEC 1 or PKCS #1)", ErrKeyType)
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE":
		return nil, fmt.Errorf("%w: the PEM block is a %s, not a private key", ErrKeyType, strings.ToLower(block.Type))
	default:
		return nil, fmt.Errorf("%w: PEM block type %q is not a private key sonde reads (PRIVATE KEY, EC PRIVATE KEY, RSA PRIVATE KEY)", ErrKeyType, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKeyType, block.Type, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%w: a %T cannot sign", ErrKeyType, key)
	}
	if _, err := keyAlgorithms(signer); err != nil {
		return nil, err
	}
	return signer, nil
}

// keyAlgorithms lists the JWS algorithms key can sign with, the preferred
// first.
func keyAlgorithms(key crypto.Signer) ([]jose.SignatureAlgorithm, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return []jose.SignatureAlgorithm{jose.ES256}, nil
		case elliptic.P384():
			return []jose.SignatureAlgorithm{jose.ES384}, nil
		case elliptic.P521():
			return []jose.SignatureAlgorithm{jose.ES512}, nil
		}
		return nil, fmt.Errorf("%w: EC curve %s (want P-256, P-384 or P-521)", ErrKeyType, k.Curve.Params().Name)
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("%w: a %d-bit RSA key (want 2048 bits or more)", ErrKeyType, k.N.BitLen())
		}
		return []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.RS384, jose.PS384, jose.RS512, jose.PS512}, nil
	case ed25519.PrivateKey:
		return []jose.SignatureAlgorithm{jose.EdDSA}, nil
	}
	return nil, fmt.Errorf("%w: a %T (want an EC, RSA or Ed25519 private key)", ErrKeyType, key)
}

// signingAlgorithm picks the algorithm to sign with key: the first the key
// can use that the authorization server lists in
// token_endpoint_auth_signing_alg_values_supported (any, when it lists
// none).
func signingAlgorithm(key crypto.Signer, supported []string) (jose.SignatureAlgorithm, error) {
	algs, err := keyAlgorithms(key)
	if err != nil {
		return "", err
	}
	if len(supported) == 0 {
		return algs[0], nil
	}
	for _, a := range algs {
		if slices.Contains(supported, string(a)) {
			return a, nil
		}
	}
	names := make([]string, len(algs))
	for i, a := range algs {
		names[i] = string(a)
	}
	return "", fmt.Errorf("%w: the key signs with %s, and the authorization server's token_endpoint_auth_signing_alg_values_supported lists only %s",
		ErrKeyType, strings.Join(names, " or "), strings.Join(supported, ", "))
}

// clientAssertion signs the client assertion of private_key_jwt for
// clientID at the authorization server whose issuer is audience (RFC 7523
// §3 as draft-ietf-oauth-rfc7523bis has it: the issuer identifier, not
// the token endpoint URL): iss and sub the client id, a fresh jti, iat
// now and exp AssertionLifetime later.
func clientAssertion(key crypto.Signer, alg jose.SignatureAlgorithm, clientID, audience string, now time.Time) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrKeyType, err)
	}
	claims := jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{audience},
		ID:       rand.Text(),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(AssertionLifetime)),
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("signing the client assertion: %v", err)
	}
	return s, nil
}

// jwtAlgorithms are the algorithms a JWT sonde reads may name.
var jwtAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA, jose.HS256, jose.HS384, jose.HS512,
}

// isJWT reports whether s is a signed JWT in compact form.
func isJWT(s string) bool {
	_, err := jwt.ParseSigned(s, jwtAlgorithms)
	return err == nil
}

// checkExpiry refuses the JWT s (what names it) when its exp has passed
// at now (30 seconds of clock skew allowed). A JWT without exp, or text
// that is no JWT (a SAML assertion), passes. The error never shows s.
func checkExpiry(s, what string, now time.Time) error {
	tok, err := jwt.ParseSigned(s, jwtAlgorithms)
	if err != nil {
		return nil
	}
	var c jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&c); err != nil || c.Expiry == nil {
		return nil
	}
	if exp := c.Expiry.Time(); now.After(exp.Add(30 * time.Second)) {
		return fmt.Errorf("%w: %s expired at %s (%s ago)", ErrExpired, what, exp.UTC().Format(time.RFC3339), now.Sub(exp).Round(time.Second))
	}
	return nil
}
