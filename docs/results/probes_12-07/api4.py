from relkt import api
from relkt.config.sections import PoolSection
from relkt.errors import RelktError


def probe(name, fn):
    try:
        fn()
        print("SILENT/ok ", name)
    except RelktError as e:
        print("ok        ", name, "->", str(e)[:160])
    except Exception as e:
        print("TRACEBACK ", name, "->", type(e).__name__, str(e)[:160])


Q, C = ["where is the cat?"], ["the cat is here", "die Katze ist hier"]
probe("retrieve no questions", lambda: api.retrieve("ngram", [], C))
probe("retrieve top_k 0", lambda: api.retrieve("ngram", Q, C, top_k=0))
probe("retrieve top_k -3", lambda: api.retrieve("ngram", Q, C, top_k=-3))
probe("retrieve langs short", lambda: api.retrieve("ngram", Q, C, langs=["en"], margin="center"))
probe("retrieve margin csls:0", lambda: api.retrieve("ngram", Q, C, langs=["en", "de"], margin="csls:0"))
probe("retrieve margin bogus", lambda: api.retrieve("ngram", Q, C, langs=["en", "de"], margin="bogus"))
probe("retrieve candidate None", lambda: api.retrieve("ngram", Q, ["a", None]))
probe("retrieve question bytes", lambda: api.retrieve("ngram", [b"x"], C))
probe("retrieve a str not list", lambda: api.retrieve("ngram", "where?", C))
probe("score data_dir a file", lambda: api.score("ngram", PoolSection(data_dir="data/en.json"), split="all"))
probe("compare missing record", lambda: api.compare(["nope.json", "nope2.json"]))
