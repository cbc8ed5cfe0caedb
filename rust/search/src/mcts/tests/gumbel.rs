//! The Gumbel root: the halving schedule, the spread of visits, seeded noise, batched
//! descents waiting for each level, and tree reuse.

use super::*;
use crate::mcts::gumbel::halving_schedule;

#[test]
fn the_halving_schedule_is_sequential_halving() {
    // 16 moves, 16 simulations: one round, each considered move visited once.
    assert_eq!(halving_schedule(16, 16, 16), vec![0; 16]);
    // 8 moves, 16 simulations (3 rounds): 8 moves once, the best 4 once more, the best 2
    // twice more.
    assert_eq!(halving_schedule(8, 16, 16), [vec![0; 8], vec![1; 4], vec![2, 2, 3, 3]].concat());
    // 16 moves, 64 simulations (4 rounds of 16): 16 x 1, then 8 moves x 2, 4 x 4, 2 x 8.
    let schedule = halving_schedule(16, 64, 64);
    let expected: Vec<u32> = [vec![0; 16], vec![1; 8], vec![2; 8], vec![3; 4], vec![4; 4], vec![5; 4], vec![6; 4]]
        .concat()
        .into_iter()
        .chain((7..15).flat_map(|l| [l, l]))
        .collect();
    assert_eq!(schedule, expected);
    // Past its budget the schedule goes on with the last two moves; one move takes them all.
    assert_eq!(&halving_schedule(4, 4, 8)[4..], &[1, 1, 2, 2]);
    assert_eq!(halving_schedule(1, 5, 3), vec![0, 1, 2]);
}

fn gumbel(simulations: u32, considered: u32, scale: f32) -> MctsConfig {
    MctsConfig { simulations, root: RootRule::Gumbel { considered, scale }, ..MctsConfig::competitive() }
}

#[test]
fn the_gumbel_root_spreads_visits_by_halving_and_finds_the_royal_capture() {
    use Color::*;
    let variant = variant();
    let pieces =
        [("18r", "R", Black), ("18k", "K", White), ("14r", "LN", White), ("20d", "G", White), ("30ee", "K", Black)];
    let capture = (sq(&variant, "18r"), sq(&variant, "18k"));
    // Uniform priors: Gumbel samples its moves blindly, so it must consider them all to be
    // sure of the capture.
    let mut game = board(&variant, &pieces);
    let moves = game.legal_moves().len() as u32;
    let mut eval =
        HeuristicEvaluator::new(&variant, HeuristicConfig { priors: PriorMode::Uniform, ..HeuristicConfig::default() });
    let (mv, _) = search(&mut game, &mut eval, gumbel(4 * moves, moves, 1.0), &mut ChaCha8Rng::seed_from_u64(0));
    assert_eq!((mv.from, mv.to), capture);
    // Capture priors put it among 16 considered moves whatever the noise.
    let priors = HeuristicConfig::default().priors;
    {
        for seed in 0..4 {
            let mut game = board(&variant, &pieces);
            let mut eval = HeuristicEvaluator::new(&variant, HeuristicConfig { priors, ..HeuristicConfig::default() });
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (mv, stats) = search(&mut game, &mut eval, gumbel(64, 16, 1.0), &mut rng);
            assert_eq!((mv.from, mv.to), capture, "seed {seed}");
            assert_eq!(stats.simulations, 64);
            // 16 moves visited, their visits as the schedule gives them out: 1, 3, 7 or 15
            // for those halved away, 23 for the last two.
            let mut visits: Vec<u32> = stats.visits.iter().map(|&(_, n)| n).filter(|&n| n > 0).collect();
            visits.sort_unstable();
            assert_eq!(visits, [vec![1; 8], vec![3; 4], vec![7; 2], vec![15, 15]].concat(), "{priors:?}");
            // The improved policy: a distribution over the moves, highest on the capture.
            assert_eq!(stats.policy.len(), stats.visits.len());
            assert!((stats.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            let best = stats.visits.iter().zip(&stats.policy).max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0 .0;
            assert_eq!(best, mv);
        }
    }
}

#[test]
fn gumbel_searches_are_seeded_and_scale_zero_is_deterministic() {
    let variant = variant();
    let run = |config: MctsConfig, seed: u64| {
        let mut game = Game::new(variant.clone());
        search(&mut game, &mut heuristic(&variant), config, &mut ChaCha8Rng::seed_from_u64(seed))
    };
    let noisy = gumbel(32, 8, 1.0);
    assert_eq!(run(noisy, 3), run(noisy, 3));
    let picks: HashSet<Move> = (0..12).map(|seed| run(noisy, seed).0).collect();
    assert!(picks.len() > 1, "the noise samples different moves");
    let quiet = gumbel(32, 8, 0.0);
    let first = run(quiet, 0);
    assert!((1..6).all(|seed| run(quiet, seed) == first));
    // With no noise the considered moves are the highest priors.
    let visited: HashSet<Move> = first.1.visits.iter().filter(|v| v.1 > 0).map(|v| v.0).collect();
    let mut game = Game::new(variant.clone());
    let moves = game.legal_moves();
    let mut priors = Vec::new();
    heuristic(&variant).evaluate(&mut game, &moves, &mut priors, &mut ChaCha8Rng::seed_from_u64(0));
    let mut order: Vec<usize> = (0..moves.len()).collect();
    order.sort_by(|&a, &b| priors[b].total_cmp(&priors[a]));
    let cut = priors[order[7]];
    assert!(visited.iter().all(|m| priors[moves.iter().position(|x| x == m).unwrap()] >= cut));
    assert_eq!(visited.len(), 8);
}

#[test]
fn batched_gumbel_descents_wait_for_each_level() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut search = Search::new(gumbel(16, 8, 1.0));
    let evaluate = |leaf: &LeafRequest| (vec![1.0; leaf.moves.len()], (leaf.moves.len() % 5) as f32 / 5.0 - 0.4);
    let root = search.select_leaves(&mut game, 8, &mut rng);
    assert!(search.expand(&root[0], &evaluate(&root[0]).0, 0.0));
    // Level 0: the 8 considered moves, once each, in one batch; the next descent (level 1)
    // waits for their values.
    let first = search.select_leaves(&mut game, 32, &mut rng);
    assert_eq!(first.len(), 8);
    assert_eq!(first.iter().map(|l| l.path[0]).collect::<HashSet<_>>().len(), 8);
    assert!(search.select_leaves(&mut game, 4, &mut rng).is_empty());
    for leaf in &first {
        let (priors, value) = evaluate(leaf);
        assert!(search.expand(leaf, &priors, value));
    }
    // Level 1: the best 4 of them; then level 2 waits.
    let second = search.select_leaves(&mut game, 32, &mut rng);
    assert_eq!(second.len(), 4);
    assert!(second.iter().all(|l| first.iter().any(|f| f.path[0] == l.path[0])));
    for leaf in &second {
        let (priors, value) = evaluate(leaf);
        assert!(search.expand(leaf, &priors, value));
    }
    let mut rest = 0;
    loop {
        let batch = search.select_leaves(&mut game, 32, &mut rng);
        if batch.is_empty() || search.completed_simulations() >= 16 {
            break;
        }
        for leaf in &batch {
            let (priors, value) = evaluate(leaf);
            assert!(search.expand(leaf, &priors, value));
            rest += 1;
        }
    }
    assert_eq!(rest, 4);
    // The same visits as one leaf at a time.
    let mut visits: Vec<u32> = search.root_stats().visits.iter().map(|v| v.1).filter(|&n| n > 0).collect();
    visits.sort_unstable();
    assert_eq!(visits, vec![1, 1, 1, 1, 2, 2, 4, 4]);
    check_tree(&search);
}

#[test]
fn gumbel_reuses_the_tree_and_counts_this_search_alone() {
    let variant = variant();
    let mut game = Game::new(variant.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let config = MctsConfig { reuse_tree: true, ..gumbel(48, 8, 1.0) };
    let mut player = MctsPlayer::new(config, heuristic(&variant));
    for _ in 0..4 {
        let (mv, stats) = player.choose(&mut game, &mut rng);
        let total: u32 = stats.visits.iter().map(|v| v.1).sum();
        assert_eq!(total, stats.reused + 48);
        assert!(stats.visits.iter().any(|&(m, n)| m == mv && n > 0));
        check_tree(&player.search);
        player.advance(mv);
        game.play(mv);
    }
    // A PUCT search on a root that a Gumbel search visited out of order restores its order.
    let mut search = Search::new(gumbel(24, 8, 1.0));
    search.run(&mut game, &mut heuristic(&variant), &mut rng);
    search.config = MctsConfig { simulations: 24, ..MctsConfig::competitive() };
    let stats = search.run(&mut game, &mut heuristic(&variant), &mut rng);
    assert_eq!(stats.visits.iter().map(|v| v.1).sum::<u32>(), 48);
    search.config.root = RootRule::GUMBEL;
    check_tree(&search);
}
