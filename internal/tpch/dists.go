package tpch

// The distributions the reference generator draws from, converted from
// its distributions file (dbgen 2.14.0, dists.dss; the word lists are
// those of the TPC-H specification, clause 4.2.2.13). Each member carries
// its cumulative weight, as dbgen holds them once read: a draw picks the
// first member whose weight is at least a uniform draw in 1..the last
// weight. The nations are not drawn by weight: their cumulative weights
// are their region keys.

var (
	containers = dist{ // p_cntr, 40 members
		{"SM CASE", 1}, {"SM BOX", 2}, {"SM BAG", 3}, {"SM JAR", 4}, {"SM PACK", 5}, {"SM PKG", 6}, {"SM CAN", 7},
		{"SM DRUM", 8}, {"LG CASE", 9}, {"LG BOX", 10}, {"LG BAG", 11}, {"LG JAR", 12}, {"LG PACK", 13},
		{"LG PKG", 14}, {"LG CAN", 15}, {"LG DRUM", 16}, {"MED CASE", 17}, {"MED BOX", 18}, {"MED BAG", 19},
		{"MED JAR", 20}, {"MED PACK", 21}, {"MED PKG", 22}, {"MED CAN", 23}, {"MED DRUM", 24}, {"JUMBO CASE", 25},
		{"JUMBO BOX", 26}, {"JUMBO BAG", 27}, {"JUMBO JAR", 28}, {"JUMBO PACK", 29}, {"JUMBO PKG", 30},
		{"JUMBO CAN", 31}, {"JUMBO DRUM", 32}, {"WRAP CASE", 33}, {"WRAP BOX", 34}, {"WRAP BAG", 35},
		{"WRAP JAR", 36}, {"WRAP PACK", 37}, {"WRAP PKG", 38}, {"WRAP CAN", 39}, {"WRAP DRUM", 40},
	}
	colors = dist{ // colors, 92 members
		{"almond", 1}, {"antique", 2}, {"aquamarine", 3}, {"azure", 4}, {"beige", 5}, {"bisque", 6},
		{"black", 7}, {"blanched", 8}, {"blue", 9}, {"blush", 10}, {"brown", 11}, {"burlywood", 12},
		{"burnished", 13}, {"chartreuse", 14}, {"chiffon", 15}, {"chocolate", 16}, {"coral", 17}, {"cornflower", 18},
		{"cornsilk", 19}, {"cream", 20}, {"cyan", 21}, {"dark", 22}, {"deep", 23}, {"dim", 24}, {"dodger", 25},
		{"drab", 26}, {"firebrick", 27}, {"floral", 28}, {"forest", 29}, {"frosted", 30}, {"gainsboro", 31},
		{"ghost", 32}, {"goldenrod", 33}, {"green", 34}, {"grey", 35}, {"honeydew", 36}, {"hot", 37},
		{"indian", 38}, {"ivory", 39}, {"khaki", 40}, {"lace", 41}, {"lavender", 42}, {"lawn", 43}, {"lemon", 44},
		{"light", 45}, {"lime", 46}, {"linen", 47}, {"magenta", 48}, {"maroon", 49}, {"medium", 50},
		{"metallic", 51}, {"midnight", 52}, {"mint", 53}, {"misty", 54}, {"moccasin", 55}, {"navajo", 56},
		{"navy", 57}, {"olive", 58}, {"orange", 59}, {"orchid", 60}, {"pale", 61}, {"papaya", 62}, {"peach", 63},
		{"peru", 64}, {"pink", 65}, {"plum", 66}, {"powder", 67}, {"puff", 68}, {"purple", 69}, {"red", 70},
		{"rose", 71}, {"rosy", 72}, {"royal", 73}, {"saddle", 74}, {"salmon", 75}, {"sandy", 76}, {"seashell", 77},
		{"sienna", 78}, {"sky", 79}, {"slate", 80}, {"smoke", 81}, {"snow", 82}, {"spring", 83}, {"steel", 84},
		{"tan", 85}, {"thistle", 86}, {"tomato", 87}, {"turquoise", 88}, {"violet", 89}, {"wheat", 90},
		{"white", 91}, {"yellow", 92},
	}
	partTypes = dist{ // p_types, 150 members
		{"STANDARD ANODIZED TIN", 1}, {"STANDARD ANODIZED NICKEL", 2}, {"STANDARD ANODIZED BRASS", 3},
		{"STANDARD ANODIZED STEEL", 4}, {"STANDARD ANODIZED COPPER", 5}, {"STANDARD BURNISHED TIN", 6},
		{"STANDARD BURNISHED NICKEL", 7}, {"STANDARD BURNISHED BRASS", 8}, {"STANDARD BURNISHED STEEL", 9},
		{"STANDARD BURNISHED COPPER", 10}, {"STANDARD PLATED TIN", 11}, {"STANDARD PLATED NICKEL", 12},
		{"STANDARD PLATED BRASS", 13}, {"STANDARD PLATED STEEL", 14}, {"STANDARD PLATED COPPER", 15},
		{"STANDARD POLISHED TIN", 16}, {"STANDARD POLISHED NICKEL", 17}, {"STANDARD POLISHED BRASS", 18},
		{"STANDARD POLISHED STEEL", 19}, {"STANDARD POLISHED COPPER", 20}, {"STANDARD BRUSHED TIN", 21},
		{"STANDARD BRUSHED NICKEL", 22}, {"STANDARD BRUSHED BRASS", 23}, {"STANDARD BRUSHED STEEL", 24},
		{"STANDARD BRUSHED COPPER", 25}, {"SMALL ANODIZED TIN", 26}, {"SMALL ANODIZED NICKEL", 27}, {"SMALL ANODIZED BRASS", 28},
		{"SMALL ANODIZED STEEL", 29}, {"SMALL ANODIZED COPPER", 30}, {"SMALL BURNISHED TIN", 31}, {"SMALL BURNISHED NICKEL", 32},
		{"SMALL BURNISHED BRASS", 33}, {"SMALL BURNISHED STEEL", 34}, {"SMALL BURNISHED COPPER", 35},
		{"SMALL PLATED TIN", 36}, {"SMALL PLATED NICKEL", 37}, {"SMALL PLATED BRASS", 38}, {"SMALL PLATED STEEL", 39},
		{"SMALL PLATED COPPER", 40}, {"SMALL POLISHED TIN", 41}, {"SMALL POLISHED NICKEL", 42}, {"SMALL POLISHED BRASS", 43},
		{"SMALL POLISHED STEEL", 44}, {"SMALL POLISHED COPPER", 45}, {"SMALL BRUSHED TIN", 46}, {"SMALL BRUSHED NICKEL", 47},
		{"SMALL BRUSHED BRASS", 48}, {"SMALL BRUSHED STEEL", 49}, {"SMALL BRUSHED COPPER", 50}, {"MEDIUM ANODIZED TIN", 51},
		{"MEDIUM ANODIZED NICKEL", 52}, {"MEDIUM ANODIZED BRASS", 53}, {"MEDIUM ANODIZED STEEL", 54},
		{"MEDIUM ANODIZED COPPER", 55}, {"MEDIUM BURNISHED TIN", 56}, {"MEDIUM BURNISHED NICKEL", 57},
		{"MEDIUM BURNISHED BRASS", 58}, {"MEDIUM BURNISHED STEEL", 59}, {"MEDIUM BURNISHED COPPER", 60},
		{"MEDIUM PLATED TIN", 61}, {"MEDIUM PLATED NICKEL", 62}, {"MEDIUM PLATED BRASS", 63}, {"MEDIUM PLATED STEEL", 64},
		{"MEDIUM PLATED COPPER", 65}, {"MEDIUM POLISHED TIN", 66}, {"MEDIUM POLISHED NICKEL", 67}, {"MEDIUM POLISHED BRASS", 68},
		{"MEDIUM POLISHED STEEL", 69}, {"MEDIUM POLISHED COPPER", 70}, {"MEDIUM BRUSHED TIN", 71}, {"MEDIUM BRUSHED NICKEL", 72},
		{"MEDIUM BRUSHED BRASS", 73}, {"MEDIUM BRUSHED STEEL", 74}, {"MEDIUM BRUSHED COPPER", 75}, {"LARGE ANODIZED TIN", 76},
		{"LARGE ANODIZED NICKEL", 77}, {"LARGE ANODIZED BRASS", 78}, {"LARGE ANODIZED STEEL", 79}, {"LARGE ANODIZED COPPER", 80},
		{"LARGE BURNISHED TIN", 81}, {"LARGE BURNISHED NICKEL", 82}, {"LARGE BURNISHED BRASS", 83}, {"LARGE BURNISHED STEEL", 84},
		{"LARGE BURNISHED COPPER", 85}, {"LARGE PLATED TIN", 86}, {"LARGE PLATED NICKEL", 87}, {"LARGE PLATED BRASS", 88},
		{"LARGE PLATED STEEL", 89}, {"LARGE PLATED COPPER", 90}, {"LARGE POLISHED TIN", 91}, {"LARGE POLISHED NICKEL", 92},
		{"LARGE POLISHED BRASS", 93}, {"LARGE POLISHED STEEL", 94}, {"LARGE POLISHED COPPER", 95}, {"LARGE BRUSHED TIN", 96},
		{"LARGE BRUSHED NICKEL", 97}, {"LARGE BRUSHED BRASS", 98}, {"LARGE BRUSHED STEEL", 99}, {"LARGE BRUSHED COPPER", 100},
		{"ECONOMY ANODIZED TIN", 101}, {"ECONOMY ANODIZED NICKEL", 102}, {"ECONOMY ANODIZED BRASS", 103},
		{"ECONOMY ANODIZED STEEL", 104}, {"ECONOMY ANODIZED COPPER", 105}, {"ECONOMY BURNISHED TIN", 106},
		{"ECONOMY BURNISHED NICKEL", 107}, {"ECONOMY BURNISHED BRASS", 108}, {"ECONOMY BURNISHED STEEL", 109},
		{"ECONOMY BURNISHED COPPER", 110}, {"ECONOMY PLATED TIN", 111}, {"ECONOMY PLATED NICKEL", 112},
		{"ECONOMY PLATED BRASS", 113}, {"ECONOMY PLATED STEEL", 114}, {"ECONOMY PLATED COPPER", 115},
		{"ECONOMY POLISHED TIN", 116}, {"ECONOMY POLISHED NICKEL", 117}, {"ECONOMY POLISHED BRASS", 118},
		{"ECONOMY POLISHED STEEL", 119}, {"ECONOMY POLISHED COPPER", 120}, {"ECONOMY BRUSHED TIN", 121},
		{"ECONOMY BRUSHED NICKEL", 122}, {"ECONOMY BRUSHED BRASS", 123}, {"ECONOMY BRUSHED STEEL", 124},
		{"ECONOMY BRUSHED COPPER", 125}, {"PROMO ANODIZED TIN", 126}, {"PROMO ANODIZED NICKEL", 127},
		{"PROMO ANODIZED BRASS", 128}, {"PROMO ANODIZED STEEL", 129}, {"PROMO ANODIZED COPPER", 130},
		{"PROMO BURNISHED TIN", 131}, {"PROMO BURNISHED NICKEL", 132}, {"PROMO BURNISHED BRASS", 133},
		{"PROMO BURNISHED STEEL", 134}, {"PROMO BURNISHED COPPER", 135}, {"PROMO PLATED TIN", 136}, {"PROMO PLATED NICKEL", 137},
		{"PROMO PLATED BRASS", 138}, {"PROMO PLATED STEEL", 139}, {"PROMO PLATED COPPER", 140}, {"PROMO POLISHED TIN", 141},
		{"PROMO POLISHED NICKEL", 142}, {"PROMO POLISHED BRASS", 143}, {"PROMO POLISHED STEEL", 144},
		{"PROMO POLISHED COPPER", 145}, {"PROMO BRUSHED TIN", 146}, {"PROMO BRUSHED NICKEL", 147}, {"PROMO BRUSHED BRASS", 148},
		{"PROMO BRUSHED STEEL", 149}, {"PROMO BRUSHED COPPER", 150},
	}
	nations = dist{ // nations, 25 members
		{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4}, {"ETHIOPIA", 0},
		{"FRANCE", 3}, {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2}, {"IRAN", 4}, {"IRAQ", 4}, {"JAPAN", 2},
		{"JORDAN", 4}, {"KENYA", 0}, {"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1}, {"CHINA", 2}, {"ROMANIA", 3},
		{"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3}, {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
	}
	regions = dist{ // regions, 5 members
		{"AFRICA", 1}, {"AMERICA", 2}, {"ASIA", 3}, {"EUROPE", 4}, {"MIDDLE EAST", 5},
	}
	priorities = dist{ // o_oprio, 5 members
		{"1-URGENT", 1}, {"2-HIGH", 2}, {"3-MEDIUM", 3}, {"4-NOT SPECIFIED", 4}, {"5-LOW", 5},
	}
	instructions = dist{ // instruct, 4 members
		{"DELIVER IN PERSON", 1}, {"COLLECT COD", 2}, {"TAKE BACK RETURN", 3}, {"NONE", 4},
	}
	shipModes = dist{ // smode, 7 members
		{"REG AIR", 1}, {"AIR", 2}, {"RAIL", 3}, {"TRUCK", 4}, {"MAIL", 5}, {"FOB", 6}, {"SHIP", 7},
	}
	returnFlags = dist{ // rflag, 2 members
		{"R", 1}, {"A", 2},
	}
	segments = dist{ // msegmnt, 5 members
		{"AUTOMOBILE", 1}, {"BUILDING", 2}, {"FURNITURE", 3}, {"HOUSEHOLD", 4}, {"MACHINERY", 5},
	}
	nouns = dist{ // nouns, 45 members
		{"packages", 40}, {"requests", 80}, {"accounts", 120}, {"deposits", 160}, {"foxes", 180}, {"ideas", 200},
		{"theodolites", 220}, {"pinto beans", 240}, {"instructions", 260}, {"dependencies", 270}, {"excuses", 280},
		{"platelets", 290}, {"asymptotes", 300}, {"courts", 305}, {"dolphins", 310}, {"multipliers", 311},
		{"sauternes", 312}, {"warthogs", 313}, {"frets", 314}, {"dinos", 315}, {"attainments", 316},
		{"somas", 317}, {"Tiresias", 318}, {"patterns", 319}, {"forges", 320}, {"braids", 321}, {"frays", 322},
		{"warhorses", 323}, {"dugouts", 324}, {"notornis", 325}, {"epitaphs", 326}, {"pearls", 327},
		{"tithes", 328}, {"waters", 329}, {"orbits", 330}, {"gifts", 331}, {"sheaves", 332}, {"depths", 333},
		{"sentiments", 334}, {"decoys", 335}, {"realms", 336}, {"pains", 337}, {"grouches", 338}, {"escapades", 339},
		{"hockey players", 340},
	}
	verbs = dist{ // verbs, 40 members
		{"sleep", 20}, {"wake", 40}, {"are", 60}, {"cajole", 80}, {"haggle", 100}, {"nag", 110}, {"use", 120},
		{"boost", 130}, {"affix", 135}, {"detect", 140}, {"integrate", 145}, {"maintain", 146}, {"nod", 147},
		{"was", 148}, {"lose", 149}, {"sublate", 150}, {"solve", 151}, {"thrash", 152}, {"promise", 153},
		{"engage", 154}, {"hinder", 155}, {"print", 156}, {"x-ray", 157}, {"breach", 158}, {"eat", 159},
		{"grow", 160}, {"impress", 161}, {"mold", 162}, {"poach", 163}, {"serve", 164}, {"run", 165},
		{"dazzle", 166}, {"snooze", 167}, {"doze", 168}, {"unwind", 169}, {"kindle", 170}, {"play", 171},
		{"hang", 172}, {"believe", 173}, {"doubt", 174},
	}
	adjectives = dist{ // adjectives, 29 members
		{"special", 20}, {"pending", 40}, {"unusual", 60}, {"express", 80}, {"furious", 81}, {"sly", 82},
		{"careful", 83}, {"blithe", 84}, {"quick", 85}, {"fluffy", 86}, {"slow", 87}, {"quiet", 88},
		{"ruthless", 89}, {"thin", 90}, {"close", 91}, {"dogged", 92}, {"daring", 93}, {"brave", 94},
		{"stealthy", 95}, {"permanent", 96}, {"enticing", 97}, {"idle", 98}, {"busy", 99}, {"regular", 149},
		{"final", 189}, {"ironic", 229}, {"even", 259}, {"bold", 279}, {"silent", 289},
	}
	adverbs = dist{ // adverbs, 28 members
		{"sometimes", 1}, {"always", 2}, {"never", 3}, {"furiously", 53}, {"slyly", 103}, {"carefully", 153},
		{"blithely", 193}, {"quickly", 223}, {"fluffily", 243}, {"slowly", 244}, {"quietly", 245}, {"ruthlessly", 246},
		{"thinly", 247}, {"closely", 248}, {"doggedly", 249}, {"daringly", 250}, {"bravely", 251}, {"stealthily", 252},
		{"permanently", 253}, {"enticingly", 254}, {"idly", 255}, {"busily", 256}, {"regularly", 257},
		{"finally", 258}, {"ironically", 259}, {"evenly", 260}, {"boldly", 261}, {"silently", 262},
	}
	auxiliaries = dist{ // auxillaries, 18 members
		{"do", 1}, {"may", 2}, {"might", 3}, {"shall", 4}, {"will", 5}, {"would", 6}, {"can", 7}, {"could", 8},
		{"should", 9}, {"ought to", 10}, {"must", 11}, {"will have to", 12}, {"shall have to", 13}, {"could have to", 14},
		{"should have to", 15}, {"must have to", 16}, {"need to", 17}, {"try to", 18},
	}
	terminators = dist{ // terminators, 6 members
		{".", 50}, {";", 51}, {":", 52}, {"?", 53}, {"!", 54}, {"--", 55},
	}
	articles = dist{ // articles, 3 members
		{"the", 50}, {"a", 70}, {"an", 75},
	}
	prepositions = dist{ // prepositions, 47 members
		{"about", 50}, {"above", 100}, {"according to", 150}, {"across", 200}, {"after", 250}, {"against", 290},
		{"along", 330}, {"alongside of", 360}, {"among", 390}, {"around", 410}, {"at", 420}, {"atop", 421},
		{"before", 422}, {"behind", 423}, {"beneath", 424}, {"beside", 425}, {"besides", 426}, {"between", 427},
		{"beyond", 428}, {"by", 429}, {"despite", 430}, {"during", 431}, {"except", 432}, {"for", 433},
		{"from", 434}, {"in place of", 435}, {"inside", 436}, {"instead of", 437}, {"into", 438}, {"near", 439},
		{"of", 440}, {"on", 441}, {"outside", 442}, {"over", 443}, {"past", 444}, {"since", 445}, {"through", 446},
		{"throughout", 447}, {"to", 448}, {"toward", 449}, {"under", 450}, {"until", 451}, {"up", 452},
		{"upon", 453}, {"whithout", 454}, {"with", 455}, {"within", 456},
	}
	grammar = dist{ // grammar, 5 members
		{"N V T", 3}, {"N V P T", 6}, {"N V N T", 9}, {"N P V N T", 10}, {"N P V P T", 11},
	}
	nounPhrases = dist{ // np, 4 members
		{"N", 10}, {"J N", 30}, {"J, J N", 40}, {"D J N", 90},
	}
	verbPhrases = dist{ // vp, 4 members
		{"V", 30}, {"X V", 31}, {"V D", 71}, {"X V D", 72},
	}
)

// member is one value of a distribution and its cumulative weight.
type member struct {
	text   string
	weight int64
}

// dist is a distribution, in dbgen's order.
type dist []member

// total is the sum of the weights: the upper bound of a draw.
func (d dist) total() int64 { return d[len(d)-1].weight }
