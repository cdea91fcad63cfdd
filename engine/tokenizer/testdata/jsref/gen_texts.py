"""Writes texts.json: random texts for the JS cross-check (see README.md).

Characters are drawn from ASCII, Unicode whitespace, the BMP, combining marks
and the SMP, keeping only characters assigned in Python's Unicode database
(14.0 for Python 3.11) so that Go (15.0), V8 and HF's tables agree on them.
U+0085 and U+FEFF are left out: JavaScript's \\s differs from Oniguruma's there.
"""
import json
import random
import unicodedata

random.seed(11)
MARKS = [0x300, 0x301, 0x308, 0x327, 0x338, 0x323, 0x302, 0x303, 0x31B, 0x345,
         0x5B0, 0x64B, 0x94D, 0x3099, 0x309A]
SPACES = [0x20, 0x20, 0x0A, 0x0D, 0x09, 0xA0, 0x3000, 0x2028, 0x0B, 0x0C]


def rand_char():
    while True:
        r = random.random()
        if r < 0.3:
            cp = random.randint(0x20, 0x7E)
        elif r < 0.4:
            cp = random.choice(SPACES)
        elif r < 0.6:
            cp = random.randint(0xA0, 0x2FFF)
        elif r < 0.75:
            cp = random.randint(0x3000, 0xD7FF)
        elif r < 0.8:
            cp = random.randint(0xF900, 0xFFFD)
        elif r < 0.9:
            cp = random.choice(MARKS)
        else:
            cp = random.randint(0x10000, 0x1FAFF)
        c = chr(cp)
        if cp in (0x85, 0xFEFF) or 0xD800 <= cp <= 0xDFFF:
            continue
        if unicodedata.category(c) == "Cn":
            continue
        return c


texts = []
for _ in range(1500):
    s = "".join(rand_char() for _ in range(random.randint(1, 30)))
    if random.random() < 0.2:
        s = s.replace(" ", random.choice(["'s ", "'LL ", "'re ", "'\u017f ", "  ", "\n "]))
    texts.append(s)
for _ in range(200):  # runs of combining marks longer than 30
    texts.append(random.choice("aeouAEOUnc")
                 + "".join(random.choice("\u0300\u0301\u0308\u0327\u0338\u0323\u0302\u0303\u031b\u0345\u0344\u0340")
                           for _ in range(random.randint(25, 80)))
                 + random.choice(["", " x", "e\u0301"]))
json.dump(texts, open("texts.json", "w"))
