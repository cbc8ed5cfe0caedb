//! The search's tests: PUCT selection and its invariant (`check_tree`), batched leaves, tree
//! reuse, root noise and temperature. The Gumbel root's: `gumbel`.

mod gumbel;

use super::noise::ln_gamma_sample;
use super::select::first_highest;
use super::tree::{Edge, State, NONE};
use super::*;
use crate::evaluation::{HeuristicConfig, HeuristicEvaluator, OpponentMoves, PriorMode};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;
use std::sync::Arc;
use taikyoku_engine::Color;
use taikyoku_engine::Variant;
use taikyoku_engine::{Piece, Position};

fn variant() -> Arc<Variant> {
    Variant::load("taikyoku", &[]).unwrap()
}

fn heuristic(variant: &Arc<Variant>) -> HeuristicEvaluator {
    HeuristicEvaluator::new(variant, HeuristicConfig::default())
}

/// A game on an otherwise empty board: (square, key, colour), Black to move.
fn board(variant: &Arc<Variant>, pieces: &[(&str, &str, Color)]) -> Game {
    let mut pos = Position::empty(variant.clone(), Color::Black);
    for &(sq, key, color) in pieces {
        let kind = variant.table.lookup(key).unwrap();
        pos.put(variant.geometry.parse_square(sq).unwrap(), Piece { kind, origin: kind, color, promoted: false });
    }
    Game::from_position(pos)
}

fn sq(variant: &Variant, name: &str) -> u16 {
    variant.geometry.parse_square(name).unwrap() as u16
}

#[test]
fn finds_a_free_royal_capture() {
    use Color::*;
    let variant = variant();
    // The Black rook on 18r can take White's only king on 18k; a White lion on 14r is bait.
    let pieces =
        [("18r", "R", Black), ("18k", "K", White), ("14r", "LN", White), ("20d", "G", White), ("30ee", "K", Black)];
    let config = MctsConfig { simulations: 200, ..MctsConfig::competitive() };
    for priors in [PriorMode::Uniform, HeuristicConfig::default().priors] {
        let mut game = board(&variant, &pieces);
        let mut eval = HeuristicEvaluator::new(&variant, HeuristicConfig { priors, ..HeuristicConfig::default() });
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let (mv, stats) = search(&mut game, &mut eval, config, &mut rng);
        assert_eq!((mv.from, mv.to), (sq(&variant, "18r"), sq(&variant, "18k")), "{priors:?}");
        let most = stats.visits.iter().map(|&(_, n)| n).max().unwrap();
        assert_eq!(stats.visits.iter().find(|&&(m, _)| m == mv).unwrap().1, most);
        assert!(stats.value > 0.5, "a won position: {}", stats.value);
        assert_eq!(stats.simulations, 200);
    }
}

#[test]
fn visits_sum_to_simulations_and_the_game_is_unchanged() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let (hash, plies) = (game.position.hash(), game.plies());
    let legal = game.position.legal_moves();
    let mut eval = heuristic(&variant);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let config = MctsConfig { simulations: 64, ..MctsConfig::default() };
    let (mv, stats) = search(&mut game, &mut eval, config, &mut rng);
    assert_eq!((game.position.hash(), game.plies()), (hash, plies));
    assert_eq!(game.position.compute_hash(), hash);
    assert!(legal.contains(&mv));
    assert_eq!(stats.simulations, 64);
    assert_eq!(stats.reused, 0);
    assert_eq!(stats.visits.iter().map(|&(_, n)| n).sum::<u32>(), 64);
    // Every legal move is listed once.
    let listed: HashSet<Move> = stats.visits.iter().map(|&(m, _)| m).collect();
    assert_eq!(listed, legal.iter().copied().collect());
    assert!((-1.0..=1.0).contains(&stats.value));
}

#[test]
fn a_game_that_tracks_moves_searches_alike_and_keeps_its_state() {
    let variant = variant();
    let mut tracked = Game::new(variant.clone());
    taikyoku_engine::random::random_playout(&mut tracked, 3, 40);
    assert!(tracked.move_state().is_some(), "random play tracks moves");
    let mut plain = Game::from_position(tracked.position.clone());
    let config = MctsConfig { simulations: 48, ..MctsConfig::default() };
    let mut results = Vec::new();
    for game in [&mut tracked, &mut plain] {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        results.push(search(game, &mut heuristic(&variant), config, &mut rng));
    }
    assert_eq!(results[0], results[1]);
    // The state was set aside during the search and is in step again at the root.
    let state = tracked.move_state().expect("the state is back and in step");
    state.check(&tracked.position).unwrap();
    assert_eq!(tracked.legal_moves(), tracked.position.legal_moves());
}

/// Plays `plies` moves of self-play; returns every choice with its statistics.
fn self_play(seed: u64, plies: usize, config: MctsConfig) -> Vec<(Move, RootStats)> {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut player = MctsPlayer::new(config, heuristic(&variant));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..plies {
        let (mv, stats) = player.choose(&mut game, &mut rng);
        player.advance(mv);
        game.play(mv);
        out.push((mv, stats));
    }
    out
}

#[test]
fn the_same_seed_gives_the_same_moves_and_visits() {
    let config = MctsConfig { simulations: 48, ..MctsConfig::default() };
    let a = self_play(9, 4, config);
    let b = self_play(9, 4, config);
    assert_eq!(a, b);
    // The statistics are not trivially equal: the searches did reuse and spread visits.
    assert!(a.iter().skip(1).any(|(_, s)| s.reused > 0));
    assert!(a.iter().all(|(_, s)| s.visits.iter().filter(|&&(_, n)| n > 0).count() > 1));
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let config = MctsConfig { simulations: 300, ..MctsConfig::competitive() };
    let mut player = MctsPlayer::new(config, heuristic(&variant));
    let (mv, stats) = player.choose(&mut game, &mut rng);
    let child_visits = stats.visits.iter().find(|&&(m, _)| m == mv).unwrap().1;
    assert!(child_visits > 2);
    // Our move: the child becomes the root with its visits.
    player.advance(mv);
    game.play(mv);
    let kept = player.search.root_stats();
    assert_eq!(kept.visits.iter().map(|&(_, n)| n).sum::<u32>(), child_visits - 1);
    // The opponent's reply, taken from the kept subtree: one level further down.
    let (reply, grandchild_visits) = *kept.visits.iter().max_by_key(|&&(_, n)| n).unwrap();
    assert!(grandchild_visits > 1);
    player.advance(reply);
    game.play(reply);
    let (_, stats) = player.choose(&mut game, &mut rng);
    assert_eq!(stats.reused, grandchild_visits - 1);
    assert_eq!(stats.visits.iter().map(|&(_, n)| n).sum::<u32>(), stats.reused + 300);
    check_tree(&player.search);

    // Without reuse, or on a game the tree does not belong to, the search starts afresh.
    let mut fresh = MctsPlayer::new(MctsConfig { reuse_tree: false, ..config }, heuristic(&variant));
    let mut game = Game::new(variant.clone());
    let (mv, _) = fresh.choose(&mut game, &mut rng);
    fresh.advance(mv);
    game.play(mv);
    assert_eq!(fresh.choose(&mut game, &mut rng).1.reused, 0);
    let mut other = Game::new(variant.clone());
    assert_eq!(player.choose(&mut other, &mut rng).1.reused, 0);
}

/// The heuristic evaluator as an evaluator that is not separable: the search expands every
/// leaf at once, as it did before the lazy expansion (and `evaluate` counts the opponent's
/// moves at the leaf).
struct Eager(HeuristicEvaluator);

impl Evaluator for Eager {
    fn evaluate(&mut self, game: &mut Game, moves: &[Move], priors: &mut Vec<f32>, rng: &mut ChaCha8Rng) -> f32 {
        self.0.evaluate(game, moves, priors, rng)
    }
}

/// A self-play game's moves, each with its search's root statistics.
type Choices = Vec<(Move, RootStats)>;

/// Self-play with tree reuse by two players over the same seeded draws, one lazy, one eager:
/// every move and root statistic, and the lazy search's nodes valued and opened (expanded
/// below the root) over its searches.
fn lazy_and_eager(config: MctsConfig, plies: usize) -> ([Choices; 2], [usize; 2]) {
    let variant = variant();
    // The values are the same numbers where the opponent's moves are counted at the leaf.
    let leaf = HeuristicConfig { opponent_moves: OpponentMoves::Leaf, ..HeuristicConfig::default() };
    let mut lazy = MctsPlayer::new(config, HeuristicEvaluator::new(&variant, leaf));
    let mut eager = MctsPlayer::new(config, Eager(HeuristicEvaluator::new(&variant, leaf)));
    assert!(lazy.evaluator.separable() && !eager.evaluator.separable());
    let mut played = [Vec::new(), Vec::new()];
    let mut nodes = [0, 0];
    for (is_lazy, out) in [true, false].into_iter().zip(played.iter_mut()) {
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for _ in 0..plies {
            if game.recorded_end().is_some() || game.end_given(&game.legal_moves()).is_some() {
                break;
            }
            let (mv, stats) = if is_lazy {
                let (mv, stats) = lazy.choose(&mut game, &mut rng);
                let tree = &lazy.search;
                assert!(tree.lazy);
                check_tree(tree);
                nodes[0] += tree.nodes.iter().filter(|n| n.state == State::Valued).count();
                nodes[1] += tree.nodes.iter().skip(1).filter(|n| n.state == State::Expanded).count();
                lazy.advance(mv);
                (mv, stats)
            } else {
                let (mv, stats) = eager.choose(&mut game, &mut rng);
                eager.advance(mv);
                (mv, stats)
            };
            game.play(mv);
            out.push((mv, stats));
        }
    }
    (played, nodes)
}

#[test]
fn lazy_expansion_searches_as_eager_expansion() {
    for config in [
        MctsConfig { simulations: 96, ..MctsConfig::default() },
        MctsConfig { simulations: 64, root: RootRule::GUMBEL, ..MctsConfig::default() },
    ] {
        // (These games end by a royal capture within a few plies.)
        let ([lazy, eager], [valued, opened]) = lazy_and_eager(config, 8);
        assert!(lazy.len() >= 4, "{} plies", lazy.len());
        assert_eq!(lazy, eager, "{config:?}");
        assert!(lazy.iter().skip(1).any(|(_, s)| s.reused > 0), "the trees were reused");
        // The expansion was lazy: leaves only valued, and valued nodes opened later.
        assert!(valued > 0 && opened > 0, "{valued} valued, {opened} opened");
    }
}

#[test]
fn a_leaf_counts_the_opponents_moves_where_the_config_says() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    for opponent_moves in [OpponentMoves::Parent, OpponentMoves::Leaf] {
        let config = HeuristicConfig { opponent_moves, ..HeuristicConfig::default() };
        let mut search = Search::new(MctsConfig { simulations: 48, ..MctsConfig::default() });
        search.run(&mut game, &mut HeuristicEvaluator::new(&variant, config), &mut ChaCha8Rng::seed_from_u64(8));
        let eval = HeuristicEvaluator::new(&variant, config);
        let root = search.nodes[0];
        let mut checked = 0;
        for edge in &search.edges[root.edges as usize..(root.edges + root.len) as usize] {
            let Some(leaf) = search.nodes.get(edge.child as usize).filter(|n| n.state == State::Valued) else {
                continue;
            };
            // The leaf's value from its material, its own moves and the opponent's: those the
            // root had (its edges), or those the opponent has at the leaf.
            game.play(edge.mv);
            let pos = &game.position;
            let mine = pos.legal_moves().len();
            assert_eq!(leaf.len as usize, mine);
            let mut theirs = Vec::new();
            pos.generate(pos.side_to_move().opponent(), &mut theirs);
            let theirs = match opponent_moves {
                OpponentMoves::Parent => root.len as usize,
                OpponentMoves::Leaf => theirs.len(),
            };
            let material = eval.values.balance(pos, pos.side_to_move());
            assert_eq!(leaf.raw_value, eval.value_from_counts(material, mine, theirs), "{opponent_moves:?}");
            game.undo();
            checked += 1;
        }
        assert!(checked >= 3, "{checked} valued leaves below the root");
    }
}

#[test]
fn a_lazy_tree_is_dropped_by_the_eager_halves() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let config = MctsConfig { simulations: 32, ..MctsConfig::default() };
    // Valued nodes need a separable evaluator to expand: `select_leaves` starts afresh...
    let mut search = Search::new(config);
    search.run(&mut game, &mut heuristic(&variant), &mut rng);
    assert!(search.lazy && search.nodes.iter().any(|n| n.state == State::Valued));
    let leaves = search.select_leaves(&mut game, 4, &mut rng);
    assert_eq!((leaves.len(), leaves[0].path.len(), search.node_count()), (1, 0, 1));
    assert!(!search.lazy);
    // ... and so does a search with an evaluator that is not separable.
    let mut search = Search::new(config);
    search.run(&mut game, &mut heuristic(&variant), &mut rng);
    let stats = search.run(&mut game, &mut Eager(heuristic(&variant)), &mut rng);
    assert_eq!((stats.reused, stats.simulations), (0, 32));
    assert!(!search.lazy && search.nodes.iter().all(|n| n.state != State::Valued));
    check_tree(&search);
}

#[test]
fn batched_leaves_are_distinct_and_expand_backs_up() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let hash = game.position.hash();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut search = Search::new(MctsConfig::default());
    // An external evaluator: uniform priors, a value from the leaf's legal move count.
    let evaluate = |leaf: &LeafRequest| (vec![1.0; leaf.moves.len()], (leaf.moves.len() % 7) as f32 / 10.0 - 0.3);

    // A new tree: only the root can be evaluated; the second descent collides with it.
    let first = search.select_leaves(&mut game, 8, &mut rng);
    assert_eq!(first.len(), 1);
    assert!(first[0].path.is_empty());
    assert_eq!(first[0].moves, game.position.legal_moves());
    let (priors, value) = evaluate(&first[0]);
    assert!(search.expand(&first[0], &priors, value));
    assert!(!search.expand(&first[0], &priors, value), "a leaf is expanded once");

    let mut all_paths = HashSet::new();
    let mut expected = 0;
    for round in 0..6 {
        // Two batches in flight at once: virtual loss keeps every leaf distinct.
        let a = search.select_leaves(&mut game, 16, &mut rng);
        let b = search.select_leaves(&mut game, 16, &mut rng);
        assert_eq!(game.position.hash(), hash);
        assert_eq!(search.pending_leaves() as usize, a.len() + b.len());
        assert!(a.len() + b.len() >= 24, "round {round}: {} + {}", a.len(), b.len());
        for leaf in a.iter().chain(&b) {
            assert!(all_paths.insert(leaf.path.clone()), "round {round}: leaf handed out twice");
            // The leaf is reconstructible from its path.
            let mut replay = game.clone();
            for &mv in &leaf.path {
                replay.play(mv);
            }
            assert_eq!(leaf.moves, replay.position.legal_moves());
        }
        for leaf in a.iter().chain(&b) {
            let (priors, value) = evaluate(leaf);
            assert!(search.expand(leaf, &priors, value));
            expected += 1;
        }
        assert_eq!(search.pending_leaves(), 0);
        assert_eq!(search.completed_simulations(), expected);
        let stats = search.root_stats();
        assert_eq!(stats.visits.iter().map(|&(_, n)| n as u64).sum::<u64>(), expected);
        check_tree(&search);
    }
    assert!(all_paths.iter().any(|p| p.len() >= 2), "the search went below the root's children");

    // Requests outstanding when the tree is re-rooted are stale, and the new root's
    // subtree has no leftover virtual loss.
    let stale = search.select_leaves(&mut game, 4, &mut rng);
    let mv = search.pick(&game, &mut rng).unwrap();
    search.advance(mv);
    game.play(mv);
    let (priors, value) = evaluate(&stale[0]);
    assert!(!search.expand(&stale[0], &priors, value));
    assert_eq!(search.pending_leaves(), 0);
    assert!(search.nodes.iter().all(|n| n.in_flight == 0 && n.state != State::Pending));
    let next = search.select_leaves(&mut game, 4, &mut rng);
    assert!(!next.is_empty());
    assert_eq!(search.nodes[0].in_flight as usize, next.len());
}

#[test]
fn select_leaves_into_calls_back_at_the_leaf() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut search = Search::new(MctsConfig::default());
    let mut eval = heuristic(&variant);
    let mut requests = Vec::new();
    let mut results = Vec::new();
    for _ in 0..20 {
        results.clear();
        search.select_leaves_into(&mut game, 4, &mut rng, &mut requests, |game, leaf, rng| {
            let mut priors = Vec::new();
            // The game stands at the leaf: its moves are the leaf's moves.
            assert_eq!(game.plies(), leaf.path.len());
            let value = eval.evaluate(game, &leaf.moves, &mut priors, rng);
            results.push((priors, value));
        });
        assert_eq!(game.plies(), 0);
        for (leaf, (priors, value)) in requests.iter().zip(&results) {
            assert!(search.expand(leaf, priors, *value));
        }
    }
    assert!(search.completed_simulations() > 20);
}

#[test]
fn root_noise_and_temperature() {
    // The gamma sampler has the right mean (E[Gamma(a)] = a), small alphas included.
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for alpha in [0.03, 0.5, 2.5] {
        let n = 40_000;
        let mean = (0..n).map(|_| ln_gamma_sample(alpha, &mut rng).exp()).sum::<f64>() / n as f64;
        assert!((mean - alpha).abs() < 0.05 * alpha.max(0.3), "alpha {alpha}: mean {mean}");
    }
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut eval = heuristic(&variant);
    let prior_of = |s: &Search| s.root_edges().iter().map(|e| (e.mv, e.prior(s.nodes[0].scale))).collect::<Vec<_>>();
    let mut quiet = Search::new(MctsConfig { simulations: 32, ..MctsConfig::competitive() });
    quiet.run(&mut game, &mut eval, &mut rng);
    let mut noisy = Search::new(MctsConfig { simulations: 32, ..MctsConfig::default() });
    noisy.run(&mut game, &mut eval, &mut rng);
    let (quiet_priors, noisy_priors) = (prior_of(&quiet), prior_of(&noisy));
    assert!((noisy_priors.iter().map(|&(_, p)| p).sum::<f32>() - 1.0).abs() < 1e-3);
    assert_ne!(quiet_priors, noisy_priors);
    // The noise changed the priors, not the selection invariant.
    check_tree(&noisy);

    // Temperature: after `temperature_plies` the most visited move; before it, samples
    // spread over the visited moves.
    let root = noisy.root_stats();
    let most = root.visits.iter().map(|&(_, n)| n).max().unwrap();
    let visits_of = |mv: Move| root.visits.iter().find(|&&(m, _)| m == mv).unwrap().1;
    noisy.config.temperature_plies = 0;
    assert_eq!(visits_of(noisy.pick(&game, &mut rng).unwrap()), most);
    noisy.config.temperature_plies = 10;
    let picks: HashSet<Move> = (0..200).map(|_| noisy.pick(&game, &mut rng).unwrap()).collect();
    assert!(picks.len() > 1);
    assert!(picks.iter().all(|&m| visits_of(m) > 0));
}

/// The selection invariant: visited edges are tried, the next untried edge has the highest
/// prior of the untried ones, and sorted nodes are sorted.
fn check_tree(search: &Search) {
    // A Gumbel root visits its edges out of PUCT's order.
    let skip = usize::from(matches!(search.config.root, RootRule::Gumbel { .. }));
    for node in search.nodes.iter().skip(skip).filter(|n| n.state == State::Expanded) {
        let edges = &search.edges[node.edges as usize..(node.edges + node.len) as usize];
        let (tried, untried) = edges.split_at(node.tried as usize);
        let prior = |e: &Edge| e.prior(node.scale);
        assert!(untried.iter().all(|e| e.child == NONE), "a visited edge outside the tried prefix");
        if let Some(next) = untried.first() {
            assert!(untried.iter().all(|e| prior(e) <= prior(next)), "the next edge is not the best untried");
        }
        if node.sorted {
            assert!(untried.windows(2).all(|w| prior(&w[0]) >= prior(&w[1])));
        }
        let total: f32 = tried.iter().chain(untried).map(prior).sum();
        assert!((total - 1.0).abs() < 1e-3, "priors sum to {total}");
    }
}

#[test]
fn the_next_untried_edge_is_the_best_one() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let mut search = Search::new(MctsConfig { simulations: 600, ..MctsConfig::default() });
    search.run(&mut game, &mut heuristic(&variant), &mut rng);
    check_tree(&search);
    assert!(search.nodes[0].sorted, "the root was tried more than SORT_AFTER times");
    assert!(search.nodes.iter().any(|n| n.state == State::Expanded && !n.sorted && n.tried > 0));
    // The first edge tried anywhere is the node's highest prior.
    for node in search.nodes.iter().filter(|n| n.state == State::Expanded) {
        let edges = &search.edges[node.edges as usize..(node.edges + node.len) as usize];
        let prior = |e: &Edge| e.prior(node.scale);
        assert!(edges.iter().all(|e| prior(e) <= prior(&edges[0])));
    }
}

#[test]
fn first_highest_is_the_running_best() {
    // The running best over the priors that `first_highest` replaces: the first of equal
    // priors, the first edge kept if its prior is NaN (nothing compares above it).
    let running_best = |edges: &[Edge], scale: f32| {
        let mut best = (0, edges[0].weight * scale);
        for (i, e) in edges.iter().enumerate().skip(1) {
            if e.weight * scale > best.1 {
                best = (i, e.weight * scale);
            }
        }
        best.0
    };
    let edges = |weights: &[f32]| -> Vec<Edge> {
        weights.iter().map(|&weight| Edge { mv: Move::new(0, 1), weight, child: NONE }).collect()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    // Scales that keep every weight apart, that round neighbours together (subnormal
    // priors), that overflow, and 0.
    for scale in [1.0, 0.3, 1e-44, 1e38, f32::INFINITY, 0.0] {
        for len in 1..40 {
            for _ in 0..50 {
                // Few distinct values, so that ties are common; now and then a NaN or -0.0.
                let weights: Vec<f32> = (0..len)
                    .map(|_| match rng.gen_range(0..20) {
                        0 => f32::NAN,
                        1 => -0.0,
                        k => (k % 5) as f32 * 0.25 + (k % 2) as f32 * 0.01,
                    })
                    .collect();
                let list = edges(&weights);
                assert_eq!(first_highest(&list, scale), running_best(&list, scale), "{weights:?} x {scale}");
            }
        }
    }
    assert_eq!(first_highest(&edges(&[0.5, 2.0, 1.0, 2.0]), 1.0), 1);
    // 0.26 and 0.5 round to one subnormal prior: the first of them is the highest prior.
    assert_eq!(first_highest(&edges(&[0.1, 0.26, 0.5]), 3e-45), 1);
    assert_eq!(first_highest(&edges(&[f32::NAN, 2.0]), 1.0), 0);
    assert_eq!(first_highest(&[], 1.0), 0);
}

#[test]
fn a_finished_game_is_a_terminal_root() {
    use Color::*;
    let variant = variant();
    // White's king is gone: Black has won; the search sees a terminal root and stops.
    let mut game = board(&variant, &[("18r", "R", Black), ("30ee", "K", Black), ("18k", "K", White)]);
    game.play(Move::new(sq(&variant, "18r") as usize, sq(&variant, "18k") as usize));
    assert!(game.recorded_end().is_some());
    let mut search = Search::new(MctsConfig::default());
    let stats = search.run(&mut game, &mut heuristic(&variant), &mut ChaCha8Rng::seed_from_u64(0));
    assert_eq!(stats.simulations, 0);
    assert!(stats.visits.is_empty());
    assert_eq!(stats.value, -1.0, "White, to move, has lost");
}

#[test]
fn an_advanced_tree_counts_the_new_roots_moves() {
    // Self-play reads the root's legal move count from the tree advanced to it (valued or
    // expanded there), instead of generating the moves again: it must be the count of the
    // game's legal moves, and nothing where the tree does not stand for the game.
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut player = MctsPlayer::new(MctsConfig { simulations: 48, ..MctsConfig::default() }, heuristic(&variant));
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    assert_eq!(player.search.root_move_count(&game), None);
    let mut known = 0;
    for _ in 0..12 {
        if game.end().is_some() {
            break;
        }
        if let Some(count) = player.search.root_move_count(&game) {
            assert_eq!(count, game.legal_moves().len());
            known += 1;
        }
        let (mv, _) = player.choose(&mut game, &mut rng);
        assert_eq!(player.search.root_move_count(&game), Some(game.legal_moves().len()));
        game.play(mv);
        player.advance(mv);
    }
    assert!(known > 0, "no advanced root was valued or expanded");
    // A tree that stands for another position counts nothing.
    let mut other = Game::new(variant);
    other.play(other.legal_moves()[0]);
    other.play(other.legal_moves()[0]);
    assert_ne!(other.position.hash(), game.position.hash());
    assert_eq!(player.search.root_move_count(&other), None);
}
