"""Model: the numpy evaluation (the compiled batch evaluator) against the scalar one (the
point evaluator with its domain checks), with numpy's broadcasting rules."""

import pickle

import pytest

np = pytest.importorskip("numpy")

import perfcompose as pc  # noqa: E402

# Relative tolerance between the batch and the point evaluation (same arithmetic, summed
# in another order at most).
RTOL = 1e-12

MODELS = [
    "2.5 + 0.5 * x * log2(x)",
    "3 + 0.25 * x^(3/2) * log2(p)^2 + 7 * p",
    "max(4 * x, 1000 + x / p, 3 * x^(1/2))",
    "min(x, 3 * p) + ceil(x / 3) * floor(p / 2)",
    "(x + 1) / (p + 2) + 2^(p / 4)",
    "sum(j, 0, log2(p) - 1, x / 2^j + 3 * j)",
]


def grid():
    rng = np.random.default_rng(7)
    x = rng.uniform(1, 1e6, 200)
    p = 2.0 ** rng.integers(1, 10, 200)
    return x, p


@pytest.mark.parametrize("text", MODELS)
def test_numpy_is_the_scalar_evaluation(text):
    m = pc.Model(text)
    x, p = grid()
    given = {"x": x, "p": p}
    arrays = {k: v for k, v in given.items() if k in m.parameters}
    got = m.evaluate(**arrays)
    assert got.dtype == np.float64 and got.shape == x.shape
    want = np.array([m.value(**{k: float(v[i]) for k, v in arrays.items()}) for i in range(len(x))])
    np.testing.assert_allclose(got, want, rtol=RTOL)


def test_broadcasting_follows_numpy():
    m = pc.Model("3 + 0.25 * x^(3/2) * log2(p)^2 + 7 * p")
    x = np.array([[1.0], [10.0], [100.0]])  # (3, 1)
    p = np.array([2.0, 4.0, 8.0, 16.0])  # (4,)
    got = m.evaluate(x=x, p=p)
    assert got.shape == (3, 4)
    X, P = np.broadcast_arrays(x, p)
    want = [[m.value(x=X[i, j], p=P[i, j]) for j in range(4)] for i in range(3)]
    np.testing.assert_allclose(got, want, rtol=RTOL)
    # Numbers, lists, 0-d arrays and size-1 arrays broadcast too.
    np.testing.assert_allclose(m.evaluate(x=10.0, p=[2, 4]), [m.value(x=10, p=2), m.value(x=10, p=4)], rtol=RTOL)
    assert m.evaluate(x=np.float64(10), p=4).shape == ()
    assert m.evaluate(x=[10.0], p=[[2.0], [4.0]]).shape == (2, 1)
    # Non-contiguous and integer inputs are converted.
    big = np.arange(1, 41, dtype=np.int64).reshape(4, 10)
    np.testing.assert_allclose(m.evaluate(x=big[:, ::2], p=8), m.evaluate(x=big[:, ::2].astype(float).copy(), p=8.0))
    assert m.evaluate(x=np.empty((0,)), p=2).shape == (0,)
    with pytest.raises(ValueError):
        m.evaluate(x=np.ones(3), p=np.ones(4))


def test_outside_the_domain_is_nan_in_arrays_and_an_error_at_a_point():
    m = pc.Model("log2(x) + 1")
    got = m.evaluate(x=[-1.0, 4.0])
    assert np.isnan(got[0]) and got[1] == 3.0
    with pytest.raises(pc.InputError):
        m.value(x=-1.0)


def test_parameters_printing_and_equality():
    m = pc.Model("2.81 + 0.48 * p^(5/4) * log2(p)")
    assert m.parameters == ["p"]
    assert pc.Model(str(m)) == m
    assert str(pc.Model(m)) == str(m)
    assert "p^(5/4)" in m.extrap()
    assert repr(m).startswith("Model(")
    assert pickle.loads(pickle.dumps(m)) == m
    assert pc.Model("1 + x") != pc.Model("2 + x")


def test_names_must_match_the_parameters():
    m = pc.Model("x + p")
    with pytest.raises(pc.InputError, match="no value for the parameter `p`"):
        m.evaluate(x=[1.0])
    with pytest.raises(pc.InputError, match="`q` is not a parameter"):
        m.evaluate(x=1.0, p=2.0, q=3.0)


def test_a_million_points():
    m = pc.Model("2.5 + 0.5 * x * log2(x) + 3 * p^2")
    x = np.linspace(1, 1e6, 1_000_000)
    p = np.linspace(1, 64, 1_000_000)
    got = m.evaluate(x=x, p=p)
    want = 2.5 + 0.5 * x * np.log2(x) + 3 * p**2
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_large_arrays_split_between_cores_keep_their_order():
    m = pc.Model("3 * x + p")
    n = 3 * 65536 + 7
    x = np.arange(n, dtype=np.float64)
    got = m.evaluate(x=x, p=x[::-1].copy())
    np.testing.assert_array_equal(got, 3 * x + x[::-1])
