from relkt import api
from relkt.errors import RelktError


def probe(name, fn):
    try:
        fn()
        print("SILENT/ok ", name)
    except RelktError as e:
        print("ok        ", name, "->", str(e)[:160])
    except Exception as e:
        print("TRACEBACK ", name, "->", type(e).__name__, str(e)[:160])


Q, C = ["where is the cat?"] * 3, ["the cat is here", "die Katze ist hier"]
probe(
    "retrieve top_k 1000 > candidates", lambda: print("  ", api.retrieve("ngram", Q, C, top_k=1000).__class__.__name__)
)
probe("retrieve csls without langs", lambda: api.retrieve("ngram", Q, C, margin="csls:5"))
probe("score encoder object()", lambda: api.score(object()))
probe("compare one result", lambda: api.compare(["res/a.json"]))
probe("config teacher seed 'x'", lambda: api.config("teacher", seed="x"))
probe("config unknown stage", lambda: api.config("teachr"))
probe("retrieve model a folder not a model", lambda: api.retrieve("hub:data", Q, C))
