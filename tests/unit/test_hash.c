/*
 * test_hash.c - the digests and the base64 of hash.h, against published
 * values: SHA-256 and SHA-384 from FIPS 180-2's examples ("abc", the
 * 448-bit message, a million 'a'), base64 from RFC 4648 section 10.  Run in
 * every build, so that each of hash_libcrypto.c (the native builds) and
 * hash_nettle.c (the WebAssembly one) is held to the same values.
 */
#include "hash.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

static const char abc448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

static void hex_is(const uint8_t *d, size_t len, const char *want)
{
	char hex[2 * KILN_SHA384_LEN + 1];

	kiln_hex(d, len, hex);
	CHECK_MSG(strcmp(hex, want) == 0, "%s, want %s", hex, want);
}

static void digests(void)
{
	uint8_t a[KILN_SHA256_LEN], b[KILN_SHA384_LEN];
	struct kiln_hasher *h;
	char *million = malloc(1000000);

	CHECK(kiln_hash_init() == KILN_OK);
	CHECK(kiln_sha256("abc", 3, a) == KILN_OK);
	hex_is(a, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK(kiln_sha256("", 0, a) == KILN_OK);
	hex_is(a, 32, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	CHECK(kiln_sha256(abc448, strlen(abc448), a) == KILN_OK);
	hex_is(a, 32, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

	/* both at once, in one pass */
	h = kiln_hasher_new();
	CHECK(h != NULL);
	kiln_hasher_update(h, "a", 1);
	kiln_hasher_update(h, "bc", 2);
	CHECK(kiln_hasher_final(h, a, b) == KILN_OK);
	hex_is(a, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hex_is(b, 48, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded163"
		      "1a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
	h = kiln_hasher_new();
	kiln_hasher_update(h, abc448, strlen(abc448));
	CHECK(kiln_hasher_final(h, NULL, b) == KILN_OK);
	hex_is(b, 48, "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05ab"
		      "fe8f450de5f36bc6b0455a8520bc4e6f5fe95b1fe3c8452b");
	/* many blocks, in pieces that do not fall on block boundaries */
	CHECK(million != NULL);
	if (million) {
		memset(million, 'a', 1000000);
		h = kiln_hasher_new();
		for (size_t done = 0, n = 1; done < 1000000; done += n, n = n * 3 % 1001 + 1)
			kiln_hasher_update(h, million + done, done + n > 1000000 ? 1000000 - done : n);
		CHECK(kiln_hasher_final(h, a, b) == KILN_OK);
		hex_is(a, 32, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
		hex_is(b, 48, "9d0e1809716474cb086e834e310a4a1ced149e9c00f24852"
			      "7972cec5704c2a5b07b8b3dc38ecc4ebae97ddd87f3d8985");
		free(million);
	}
}

static void base64(void)
{
	static const char *const vectors[][2] = {
		{ "", "" },	    { "f", "Zg==" },	     { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	char out[64];
	uint8_t back[64];
	size_t n;

	for (size_t i = 0; i < sizeof(vectors) / sizeof(*vectors); i++) {
		const char *in = vectors[i][0], *want = vectors[i][1];
		size_t len = strlen(in);

		memset(out, '#', sizeof(out));
		CHECK(kiln_base64_encode(in, len, out) == strlen(want));
		CHECK(KILN_BASE64_LEN(len) == strlen(want));
		CHECK_MSG(strcmp(out, want) == 0, "'%s': '%s', want '%s'", in, out, want);
		CHECK(kiln_base64_decode(want, strlen(want), back, &n) && n == len &&
		      memcmp(back, in, len) == 0);
	}
	/* every byte value, there and back */
	{
		uint8_t all[256];
		char text[KILN_BASE64_LEN(256) + 1];
		for (int i = 0; i < 256; i++)
			all[i] = (uint8_t)(255 - i);
		CHECK(kiln_base64_encode(all, 256, text) == KILN_BASE64_LEN(256));
		CHECK(strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") ==
		      strlen(text));
		uint8_t *again = malloc(256);
		CHECK(again && kiln_base64_decode(text, strlen(text), again, &n) && n == 256 &&
		      memcmp(again, all, 256) == 0);
		free(again);
	}
	/* not base64 */
	CHECK(!kiln_base64_decode("Zm9", 3, back, &n));	    /* not a multiple of 4 */
	CHECK(!kiln_base64_decode("Zm9v!A==", 8, back, &n));  /* a character outside */
	CHECK(!kiln_base64_decode(" Zm9vYmE", 8, back, &n));  /* white space */
	CHECK(!kiln_base64_decode("Zm9vYmE\n", 8, back, &n));

	/* the SRI form of a SHA-384 */
	{
		uint8_t d[KILN_SHA384_LEN], again[KILN_SHA384_LEN];
		char sri[72];
		struct kiln_hasher *h = kiln_hasher_new();
		kiln_hasher_update(h, "abc", 3);
		kiln_hasher_final(h, NULL, d);
		kiln_sri_sha384(d, sri);
		CHECK(strlen(sri) == 71 && strncmp(sri, "sha384-", 7) == 0);
		CHECK(strcmp(sri + 7, "ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn") == 0);
		CHECK(kiln_base64_decode(sri + 7, 64, again, &n) && n == 48 && memcmp(again, d, 48) == 0);
	}
}

int main(void)
{
	digests();
	base64();
	return check_exit("test_hash");
}
