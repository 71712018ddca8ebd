"""The classic Theano deep-learning tutorial programs' way of using Theano (logistic_sgd,
dA, rbm), on scikit-learn's digits, with only `import theano` changed: data in shared
variables sliced through givens, labels cast from floatX, constructors testing `if not W:`,
random streams for corruption and Gibbs sampling, scan with None outputs and a persistent
chain, consider_constant, and scan's updates merged with the parameters' updates."""

from __future__ import annotations

import numpy
import pytest

import sympile as theano
import sympile.tensor as T
from sympile.tensor.shared_randomstreams import RandomStreams

sklearn_datasets = pytest.importorskip("sklearn.datasets")


def load_data():
    digits = sklearn_datasets.load_digits()
    x = (digits.data / 16.0).astype(theano.config.floatX)
    y = digits.target

    def shared_dataset(data_x, data_y):
        shared_x = theano.shared(numpy.asarray(data_x, dtype=theano.config.floatX), borrow=True)
        shared_y = theano.shared(numpy.asarray(data_y, dtype=theano.config.floatX), borrow=True)
        return shared_x, T.cast(shared_y, "int32")

    return [shared_dataset(x[:1200], y[:1200]), shared_dataset(x[1200:1500], y[1200:1500]),
            shared_dataset(x[1500:], y[1500:])]


class LogisticRegression:
    def __init__(self, input, n_in, n_out, W=None, b=None):
        if not W:
            W = theano.shared(numpy.zeros((n_in, n_out), dtype=theano.config.floatX),
                              name="W", borrow=True)
        if not b:
            b = theano.shared(numpy.zeros((n_out,), dtype=theano.config.floatX), name="b",
                              borrow=True)
        self.W, self.b = W, b
        self.p_y_given_x = T.nnet.softmax(T.dot(input, self.W) + self.b)
        self.y_pred = T.argmax(self.p_y_given_x, axis=1)
        self.params = [self.W, self.b]

    def negative_log_likelihood(self, y):
        return -T.mean(T.log(self.p_y_given_x)[T.arange(y.shape[0]), y])

    def errors(self, y):
        if y.ndim != self.y_pred.ndim:
            raise TypeError("y should have the same shape as self.y_pred")
        return T.mean(T.neq(self.y_pred, y))


def test_logistic_sgd_with_early_stopping():
    (train_x, train_y), (valid_x, valid_y), (test_x, test_y) = load_data()
    batch_size, learning_rate = 100, 0.5
    index, x, y = T.lscalar(), T.matrix("x"), T.ivector("y")
    classifier = LogisticRegression(input=x, n_in=64, n_out=10)
    cost = classifier.negative_log_likelihood(y)

    def batch(data, labels):
        return {x: data[index * batch_size:(index + 1) * batch_size],
                y: labels[index * batch_size:(index + 1) * batch_size]}

    test_model = theano.function([index], classifier.errors(y), givens=batch(test_x, test_y))
    validate_model = theano.function([index], classifier.errors(y),
                                     givens=batch(valid_x, valid_y))
    g_W = T.grad(cost=cost, wrt=classifier.W)
    g_b = T.grad(cost=cost, wrt=classifier.b)
    train_model = theano.function(
        inputs=[index], outputs=cost,
        updates=[(classifier.W, classifier.W - learning_rate * g_W),
                 (classifier.b, classifier.b - learning_rate * g_b)],
        givens=batch(train_x, train_y))
    best = numpy.inf
    for _epoch in range(30):
        for minibatch_index in range(12):
            train_model(minibatch_index)
        validation = numpy.mean([validate_model(i) for i in range(3)])
        best = min(best, validation)
    test_score = numpy.mean([test_model(i) for i in range(2)])
    assert best < 0.1 and test_score < 0.2  # chance: 0.9


class dA:
    def __init__(self, numpy_rng, theano_rng=None, input=None, n_visible=64, n_hidden=32,
                 W=None, bhid=None, bvis=None):
        if not theano_rng:
            theano_rng = RandomStreams(numpy_rng.randint(2 ** 30))
        if not W:
            bound = 4 * numpy.sqrt(6.0 / (n_hidden + n_visible))
            W = theano.shared(numpy.asarray(numpy_rng.uniform(-bound, bound,
                                                              (n_visible, n_hidden)),
                                            dtype=theano.config.floatX), name="W")
        if not bvis:
            bvis = theano.shared(numpy.zeros(n_visible, dtype=theano.config.floatX))
        if not bhid:
            bhid = theano.shared(numpy.zeros(n_hidden, dtype=theano.config.floatX), name="b")
        self.W, self.b, self.b_prime, self.W_prime = W, bhid, bvis, W.T
        self.theano_rng = theano_rng
        self.x = input if input is not None else T.dmatrix(name="input")
        self.params = [self.W, self.b, self.b_prime]

    def get_corrupted_input(self, input, corruption_level):
        return self.theano_rng.binomial(size=input.shape, n=1, p=1 - corruption_level,
                                        dtype=theano.config.floatX) * input

    def get_cost_updates(self, corruption_level, learning_rate):
        tilde_x = self.get_corrupted_input(self.x, corruption_level)
        y = T.nnet.sigmoid(T.dot(tilde_x, self.W) + self.b)
        z = T.nnet.sigmoid(T.dot(y, self.W_prime) + self.b_prime)
        L = -T.sum(self.x * T.log(z) + (1 - self.x) * T.log(1 - z), axis=1)
        cost = T.mean(L)
        gparams = T.grad(cost, self.params)
        return cost, [(p, p - learning_rate * g) for p, g in zip(self.params, gparams)]


def test_denoising_autoencoder():
    (train_x, _), _, _ = load_data()
    index, x = T.lscalar(), T.matrix("x")
    rng = numpy.random.RandomState(123)
    da = dA(numpy_rng=rng, theano_rng=RandomStreams(rng.randint(2 ** 30)), input=x)
    cost, updates = da.get_cost_updates(corruption_level=0.3, learning_rate=0.1)
    train_da = theano.function([index], cost, updates=updates,
                               givens={x: train_x[index * 20:(index + 1) * 20]})
    first = numpy.mean([train_da(i) for i in range(60)])
    for _epoch in range(5):
        last = numpy.mean([train_da(i) for i in range(60)])
    assert last < 0.8 * first


class RBM:
    def __init__(self, input=None, n_visible=64, n_hidden=32, numpy_rng=None,
                 theano_rng=None):
        numpy_rng = numpy_rng or numpy.random.RandomState(1234)
        self.theano_rng = theano_rng or RandomStreams(numpy_rng.randint(2 ** 30))
        bound = 4 * numpy.sqrt(6.0 / (n_hidden + n_visible))
        self.W = theano.shared(numpy.asarray(numpy_rng.uniform(-bound, bound,
                                                               (n_visible, n_hidden)),
                                             dtype=theano.config.floatX), name="W")
        self.hbias = theano.shared(numpy.zeros(n_hidden, dtype=theano.config.floatX))
        self.vbias = theano.shared(numpy.zeros(n_visible, dtype=theano.config.floatX))
        self.input = input if input is not None else T.matrix("input")
        self.n_visible = n_visible
        self.params = [self.W, self.hbias, self.vbias]

    def free_energy(self, v_sample):
        wx_b = T.dot(v_sample, self.W) + self.hbias
        return -T.sum(T.log(1 + T.exp(wx_b)), axis=1) - T.dot(v_sample, self.vbias)

    def propup(self, vis):
        pre = T.dot(vis, self.W) + self.hbias
        return [pre, T.nnet.sigmoid(pre)]

    def sample_h_given_v(self, v0_sample):
        pre, h1_mean = self.propup(v0_sample)
        h1_sample = self.theano_rng.binomial(size=h1_mean.shape, n=1, p=h1_mean,
                                             dtype=theano.config.floatX)
        return [pre, h1_mean, h1_sample]

    def sample_v_given_h(self, h0_sample):
        pre = T.dot(h0_sample, self.W.T) + self.vbias
        v1_mean = T.nnet.sigmoid(pre)
        v1_sample = self.theano_rng.binomial(size=v1_mean.shape, n=1, p=v1_mean,
                                             dtype=theano.config.floatX)
        return [pre, v1_mean, v1_sample]

    def gibbs_hvh(self, h0_sample):
        pre_v1, v1_mean, v1_sample = self.sample_v_given_h(h0_sample)
        pre_h1, h1_mean, h1_sample = self.sample_h_given_v(v1_sample)
        return [pre_v1, v1_mean, v1_sample, pre_h1, h1_mean, h1_sample]

    def get_cost_updates(self, lr=0.1, persistent=None, k=1):
        pre_ph, ph_mean, ph_sample = self.sample_h_given_v(self.input)
        chain_start = ph_sample if persistent is None else persistent
        ([pre_nvs, nv_means, nv_samples, pre_nhs, nh_means, nh_samples], updates) = \
            theano.scan(self.gibbs_hvh, outputs_info=[None, None, None, None, None,
                                                      chain_start], n_steps=k)
        chain_end = nv_samples[-1]
        cost = T.mean(self.free_energy(self.input)) - T.mean(self.free_energy(chain_end))
        gparams = T.grad(cost, self.params, consider_constant=[chain_end])
        for gparam, param in zip(gparams, self.params):
            updates[param] = param - gparam * T.cast(lr, dtype=theano.config.floatX)
        if persistent:
            updates[persistent] = nh_samples[-1]
        monitoring_cost = T.mean(T.sum(
            self.input * T.log(T.nnet.sigmoid(pre_nvs[-1]))
            + (1 - self.input) * T.log(1 - T.nnet.sigmoid(pre_nvs[-1])), axis=1))
        return monitoring_cost, updates


def test_rbm_with_a_persistent_chain():
    (train_x, _), _, _ = load_data()
    index, x = T.lscalar(), T.matrix("x")
    rng = numpy.random.RandomState(123)
    persistent_chain = theano.shared(numpy.zeros((20, 32), dtype=theano.config.floatX),
                                     borrow=True)
    rbm = RBM(input=x, numpy_rng=rng, theano_rng=RandomStreams(rng.randint(2 ** 30)))
    cost, updates = rbm.get_cost_updates(lr=0.1, persistent=persistent_chain, k=3)
    train_rbm = theano.function([index], cost, updates=updates,
                                givens={x: train_x[index * 20:(index + 1) * 20]})
    first = numpy.mean([train_rbm(i) for i in range(60)])
    for _epoch in range(4):
        last = numpy.mean([train_rbm(i) for i in range(60)])
    assert numpy.isfinite(last) and last > first  # the reconstruction log-likelihood rises
    assert persistent_chain.get_value().any()
