//! Topic and country predictions: the labels the search index stores as weighted tags, the
//! search terms that select them, and production's query rules.
//!
//! The service builds CirrusSearch keywords from a request (`articletopic:<group>` per
//! `+`-separated group of the topic, lowercased with spaces turned into `-`; likewise
//! `articlecountry:` for countries), and CirrusSearch matches a keyword when a page has a
//! weighted tag `classification.prediction.articletopic/<label>` (or `…articlecountry/…`)
//! for any `|`-separated term of it. Separate keywords must all match. Only presence counts:
//! the service asks for a random order, so scores never rank. The term tables below are
//! CirrusSearch's (`ArticleTopicFeature`, `ArticleCountryFeature`).

/// Prefix of a topic prediction's weighted tag.
pub const TOPIC_TAG_PREFIX: &str = "classification.prediction.articletopic/";
/// Prefix of a country prediction's weighted tag.
pub const COUNTRY_TAG_PREFIX: &str = "classification.prediction.articlecountry/";

/// Which prediction a tag or keyword is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Topic,
    Country,
}

/// A weighted tag split into its kind, label and score (`…/STEM.Biology|939`); `None` for
/// tags of other models.
pub fn parse_tag(tag: &str) -> Option<(Kind, &str, i16)> {
    let (kind, rest) = if let Some(rest) = tag.strip_prefix(TOPIC_TAG_PREFIX) {
        (Kind::Topic, rest)
    } else {
        (Kind::Country, tag.strip_prefix(COUNTRY_TAG_PREFIX)?)
    };
    // The score follows the last `|`; a tag without one counts as present (score 1000 is
    // what the index's term-frequency filter caps at, and no score means "present").
    let (label, score) = match rest.rsplit_once('|') {
        Some((label, score)) => (label, score.trim().parse::<i64>().ok()?),
        None => (rest, 1000),
    };
    if label.is_empty() {
        return None;
    }
    let score = i16::try_from(score.clamp(0, 1000)).unwrap_or(1000);
    Some((kind, label, score))
}

/// The labels a search term selects: for topics, the label and its older spelling with
/// spaces (the live index holds both); for countries, the country's name.
pub fn labels_of_term(kind: Kind, term: &str) -> Vec<String> {
    match kind {
        Kind::Topic => TOPIC_LABELS
            .iter()
            .find(|(t, _)| *t == term)
            .map(|(_, label)| {
                let mut labels = vec![(*label).to_owned()];
                if label.contains('_') {
                    labels.push(label.replace('_', " "));
                }
                labels
            })
            .unwrap_or_default(),
        Kind::Country => COUNTRY_LABELS
            .iter()
            .find(|(t, _)| *t == term)
            .map(|(_, label)| vec![(*label).to_owned()])
            .unwrap_or_default(),
    }
}

/// The search term of a label (`STEM.Biology` → `biology`, `United States` → `usa`), for
/// gap tables; `None` for a label no term selects.
pub fn term_of_label(kind: Kind, label: &str) -> Option<&'static str> {
    let table: &[(&str, &str)] = match kind {
        Kind::Topic => &TOPIC_LABELS,
        Kind::Country => &COUNTRY_LABELS,
    };
    table
        .iter()
        .find(|(_, l)| *l == label || (kind == Kind::Topic && l.replace('_', " ") == label))
        .map(|(term, _)| *term)
}

/// One keyword of the search (`articletopic:women|space`): the labels any of which matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyword {
    pub kind: Kind,
    /// The valid terms, in the order given.
    pub terms: Vec<String>,
    /// The labels they select.
    pub labels: Vec<String>,
}

/// What a request's topic and country select: keywords that must all match, or nothing at
/// all (a keyword without one valid term makes CirrusSearch answer no results).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TagFilter {
    pub keywords: Vec<Keyword>,
    /// A keyword had no valid term: no page matches.
    pub impossible: bool,
    /// Terms CirrusSearch would warn about, for the caller's log.
    pub unknown_terms: Vec<String>,
}

impl TagFilter {
    /// The filter of a request's `topic` and `country` as the service sends them (each its
    /// values joined by `|`), built as the service and CirrusSearch build it.
    pub fn from_request(topic: Option<&str>, country: Option<&str>) -> Self {
        let mut filter = Self::default();
        if let Some(topic) = topic.filter(|t| !t.is_empty()) {
            // The service: spaces become `-`, lower case, groups split on `+`.
            let topic = topic.replace(' ', "-").to_lowercase();
            for group in topic.split('+') {
                filter.add_keyword(Kind::Topic, group.trim());
            }
        }
        if let Some(country) = country.filter(|c| !c.is_empty()) {
            for group in country.split('+') {
                filter.add_keyword(Kind::Country, group.trim());
            }
        }
        filter
    }

    /// CirrusSearch's reading of one keyword value: lower case, `|` alternatives, each
    /// without its `^boost`, unknown terms dropped.
    fn add_keyword(&mut self, kind: Kind, value: &str) {
        let mut keyword = Keyword {
            kind,
            terms: Vec::new(),
            labels: Vec::new(),
        };
        for raw in value.to_lowercase().split('|') {
            let term = raw.split_once('^').map_or(raw, |(term, _)| term);
            let labels = labels_of_term(kind, term);
            if labels.is_empty() {
                self.unknown_terms.push(term.to_owned());
                continue;
            }
            keyword.terms.push(term.to_owned());
            for label in labels {
                if !keyword.labels.contains(&label) {
                    keyword.labels.push(label);
                }
            }
        }
        if keyword.terms.is_empty() {
            self.impossible = true;
        }
        self.keywords.push(keyword);
    }

    /// Whether the request filters by tags at all.
    pub fn is_empty(&self) -> bool {
        self.keywords.is_empty() && !self.impossible
    }

    /// Whether a page with these tags matches.
    pub fn matches<'a>(&self, mut tags: impl FnMut(Kind) -> Vec<&'a str>) -> bool {
        if self.impossible {
            return false;
        }
        self.keywords.iter().all(|k| {
            let have = tags(k.kind);
            k.labels.iter().any(|l| have.contains(&l.as_str()))
        })
    }
}

/// Topic search terms and the prediction labels they match (CirrusSearch's `articletopic`).
pub const TOPIC_LABELS: [(&str, &str); 64] = [
    ("biography", "Culture.Biography.Biography*"),
    ("women", "Culture.Biography.Women"),
    ("food-and-drink", "Culture.Food_and_drink"),
    ("internet-culture", "Culture.Internet_culture"),
    ("linguistics", "Culture.Linguistics"),
    ("literature", "Culture.Literature"),
    ("books", "Culture.Media.Books"),
    ("entertainment", "Culture.Media.Entertainment"),
    ("films", "Culture.Media.Films"),
    ("media", "Culture.Media.Media*"),
    ("music", "Culture.Media.Music"),
    ("radio", "Culture.Media.Radio"),
    ("software", "Culture.Media.Software"),
    ("television", "Culture.Media.Television"),
    ("video-games", "Culture.Media.Video_games"),
    ("performing-arts", "Culture.Performing_arts"),
    ("philosophy-and-religion", "Culture.Philosophy_and_religion"),
    ("sports", "Culture.Sports"),
    ("architecture", "Culture.Visual_arts.Architecture"),
    ("comics-and-anime", "Culture.Visual_arts.Comics_and_Anime"),
    ("fashion", "Culture.Visual_arts.Fashion"),
    ("visual-arts", "Culture.Visual_arts.Visual_arts*"),
    ("geographical", "Geography.Geographical"),
    ("africa", "Geography.Regions.Africa.Africa*"),
    ("central-africa", "Geography.Regions.Africa.Central_Africa"),
    ("eastern-africa", "Geography.Regions.Africa.Eastern_Africa"),
    (
        "northern-africa",
        "Geography.Regions.Africa.Northern_Africa",
    ),
    (
        "southern-africa",
        "Geography.Regions.Africa.Southern_Africa",
    ),
    ("western-africa", "Geography.Regions.Africa.Western_Africa"),
    (
        "central-america",
        "Geography.Regions.Americas.Central_America",
    ),
    ("north-america", "Geography.Regions.Americas.North_America"),
    ("south-america", "Geography.Regions.Americas.South_America"),
    ("asia", "Geography.Regions.Asia.Asia*"),
    ("central-asia", "Geography.Regions.Asia.Central_Asia"),
    ("east-asia", "Geography.Regions.Asia.East_Asia"),
    ("north-asia", "Geography.Regions.Asia.North_Asia"),
    ("south-asia", "Geography.Regions.Asia.South_Asia"),
    ("southeast-asia", "Geography.Regions.Asia.Southeast_Asia"),
    ("west-asia", "Geography.Regions.Asia.West_Asia"),
    ("eastern-europe", "Geography.Regions.Europe.Eastern_Europe"),
    ("europe", "Geography.Regions.Europe.Europe*"),
    (
        "northern-europe",
        "Geography.Regions.Europe.Northern_Europe",
    ),
    (
        "southern-europe",
        "Geography.Regions.Europe.Southern_Europe",
    ),
    ("western-europe", "Geography.Regions.Europe.Western_Europe"),
    ("oceania", "Geography.Regions.Oceania"),
    (
        "business-and-economics",
        "History_and_Society.Business_and_economics",
    ),
    ("education", "History_and_Society.Education"),
    ("history", "History_and_Society.History"),
    (
        "military-and-warfare",
        "History_and_Society.Military_and_warfare",
    ),
    (
        "politics-and-government",
        "History_and_Society.Politics_and_government",
    ),
    ("society", "History_and_Society.Society"),
    ("transportation", "History_and_Society.Transportation"),
    ("biology", "STEM.Biology"),
    ("chemistry", "STEM.Chemistry"),
    ("computing", "STEM.Computing"),
    ("earth-and-environment", "STEM.Earth_and_environment"),
    ("engineering", "STEM.Engineering"),
    ("libraries-and-information", "STEM.Libraries_&_Information"),
    ("mathematics", "STEM.Mathematics"),
    ("medicine-and-health", "STEM.Medicine_&_Health"),
    ("physics", "STEM.Physics"),
    ("stem", "STEM.STEM*"),
    ("space", "STEM.Space"),
    ("technology", "STEM.Technology"),
];

/// ISO 3166 alpha-3 codes and the prediction labels they match (`articlecountry`).
pub const COUNTRY_LABELS: [(&str, &str); 250] = [
    ("afg", "Afghanistan"),
    ("ala", "Åland"),
    ("alb", "Albania"),
    ("dza", "Algeria"),
    ("asm", "American Samoa"),
    ("and", "Andorra"),
    ("ago", "Angola"),
    ("aia", "Anguilla"),
    ("ata", "Antarctica"),
    ("atg", "Antigua and Barbuda"),
    ("arg", "Argentina"),
    ("arm", "Armenia"),
    ("abw", "Aruba"),
    ("aus", "Australia"),
    ("aut", "Austria"),
    ("aze", "Azerbaijan"),
    ("bhs", "Bahamas"),
    ("bhr", "Bahrain"),
    ("bgd", "Bangladesh"),
    ("brb", "Barbados"),
    ("blr", "Belarus"),
    ("bel", "Belgium"),
    ("blz", "Belize"),
    ("ben", "Benin"),
    ("bmu", "Bermuda"),
    ("btn", "Bhutan"),
    ("bol", "Bolivia"),
    ("bes", "Bonaire, Sint Eustatius, and Saba"),
    ("bih", "Bosnia and Herzegovina"),
    ("bwa", "Botswana"),
    ("bvt", "Bouvet Island"),
    ("bra", "Brazil"),
    ("iot", "British Indian Ocean Territory"),
    ("vgb", "British Virgin Islands"),
    ("brn", "Brunei"),
    ("bgr", "Bulgaria"),
    ("bfa", "Burkina Faso"),
    ("bdi", "Burundi"),
    ("khm", "Cambodia"),
    ("cmr", "Cameroon"),
    ("can", "Canada"),
    ("cpv", "Cape Verde"),
    ("cym", "Cayman Islands"),
    ("caf", "Central African Republic"),
    ("tcd", "Chad"),
    ("chl", "Chile"),
    ("chn", "China"),
    ("cxr", "Christmas Island"),
    ("cck", "Cocos (Keeling) Islands"),
    ("col", "Colombia"),
    ("com", "Comoros"),
    ("cok", "Cook Islands"),
    ("cri", "Costa Rica"),
    ("hrv", "Croatia"),
    ("cub", "Cuba"),
    ("cuw", "Curaçao"),
    ("cyp", "Cyprus"),
    ("cze", "Czech Republic"),
    ("cod", "Democratic Republic of the Congo"),
    ("dnk", "Denmark"),
    ("dji", "Djibouti"),
    ("dma", "Dominica"),
    ("dom", "Dominican Republic"),
    ("tls", "East Timor"),
    ("ecu", "Ecuador"),
    ("egy", "Egypt"),
    ("slv", "El Salvador"),
    ("gnq", "Equatorial Guinea"),
    ("eri", "Eritrea"),
    ("est", "Estonia"),
    ("swz", "Eswatini"),
    ("eth", "Ethiopia"),
    ("flk", "Falkland Islands"),
    ("fro", "Faroe Islands"),
    ("fsm", "Federated States of Micronesia"),
    ("fji", "Fiji"),
    ("fin", "Finland"),
    ("fra", "France"),
    ("guf", "French Guiana"),
    ("pyf", "French Polynesia"),
    ("atf", "French Southern and Antarctic Lands"),
    ("gab", "Gabon"),
    ("gmb", "Gambia"),
    ("geo", "Georgia"),
    ("deu", "Germany"),
    ("gha", "Ghana"),
    ("gib", "Gibraltar"),
    ("grc", "Greece"),
    ("grl", "Greenland"),
    ("grd", "Grenada"),
    ("glp", "Guadeloupe"),
    ("gum", "Guam"),
    ("gtm", "Guatemala"),
    ("ggy", "Guernsey"),
    ("gin", "Guinea"),
    ("gnb", "Guinea-Bissau"),
    ("guy", "Guyana"),
    ("hti", "Haiti"),
    ("hmd", "Heard Island and McDonald Islands"),
    ("hnd", "Honduras"),
    ("hkg", "Hong Kong"),
    ("hun", "Hungary"),
    ("isl", "Iceland"),
    ("ind", "India"),
    ("idn", "Indonesia"),
    ("irn", "Iran"),
    ("irq", "Iraq"),
    ("irl", "Ireland"),
    ("imn", "Isle of Man"),
    ("isr", "Israel"),
    ("ita", "Italy"),
    ("civ", "Ivory Coast"),
    ("jam", "Jamaica"),
    ("jpn", "Japan"),
    ("jey", "Jersey"),
    ("jor", "Jordan"),
    ("kaz", "Kazakhstan"),
    ("ken", "Kenya"),
    ("kir", "Kiribati"),
    ("xkx", "Kosovo"),
    ("kwt", "Kuwait"),
    ("kgz", "Kyrgyzstan"),
    ("lao", "Laos"),
    ("lva", "Latvia"),
    ("lbn", "Lebanon"),
    ("lso", "Lesotho"),
    ("lbr", "Liberia"),
    ("lby", "Libya"),
    ("lie", "Liechtenstein"),
    ("ltu", "Lithuania"),
    ("lux", "Luxembourg"),
    ("mac", "Macao"),
    ("mdg", "Madagascar"),
    ("mwi", "Malawi"),
    ("mys", "Malaysia"),
    ("mdv", "Maldives"),
    ("mli", "Mali"),
    ("mlt", "Malta"),
    ("mhl", "Marshall Islands"),
    ("mtq", "Martinique"),
    ("mrt", "Mauritania"),
    ("mus", "Mauritius"),
    ("myt", "Mayotte"),
    ("mex", "Mexico"),
    ("mda", "Moldova"),
    ("mco", "Monaco"),
    ("mng", "Mongolia"),
    ("mne", "Montenegro"),
    ("msr", "Montserrat"),
    ("mar", "Morocco"),
    ("moz", "Mozambique"),
    ("mmr", "Myanmar"),
    ("nam", "Namibia"),
    ("nru", "Nauru"),
    ("npl", "Nepal"),
    ("nld", "Netherlands"),
    ("ncl", "New Caledonia"),
    ("nzl", "New Zealand"),
    ("nic", "Nicaragua"),
    ("ner", "Niger"),
    ("nga", "Nigeria"),
    ("niu", "Niue"),
    ("nfk", "Norfolk Island"),
    ("prk", "North Korea"),
    ("mkd", "North Macedonia"),
    ("mnp", "Northern Mariana Islands"),
    ("nor", "Norway"),
    ("omn", "Oman"),
    ("pak", "Pakistan"),
    ("plw", "Palau"),
    ("pse", "Palestine"),
    ("pan", "Panama"),
    ("png", "Papua New Guinea"),
    ("pry", "Paraguay"),
    ("per", "Peru"),
    ("phl", "Philippines"),
    ("pcn", "Pitcairn Islands"),
    ("pol", "Poland"),
    ("prt", "Portugal"),
    ("pri", "Puerto Rico"),
    ("qat", "Qatar"),
    ("cog", "Republic of the Congo"),
    ("reu", "Réunion"),
    ("rou", "Romania"),
    ("rus", "Russia"),
    ("rwa", "Rwanda"),
    ("blm", "Saint Barthélemy"),
    ("shn", "Saint Helena, Ascension, and Tristan da Cunha"),
    ("kna", "Saint Kitts and Nevis"),
    ("lca", "Saint Lucia"),
    ("maf", "Saint Martin"),
    ("spm", "Saint Pierre and Miquelon"),
    ("vct", "Saint Vincent and the Grenadines"),
    ("wsm", "Samoa"),
    ("smr", "San Marino"),
    ("stp", "São Tomé and Príncipe"),
    ("sau", "Saudi Arabia"),
    ("sen", "Senegal"),
    ("srb", "Serbia"),
    ("syc", "Seychelles"),
    ("sle", "Sierra Leone"),
    ("sgp", "Singapore"),
    ("sxm", "Sint Maarten"),
    ("svk", "Slovakia"),
    ("svn", "Slovenia"),
    ("slb", "Solomon Islands"),
    ("som", "Somalia"),
    ("zaf", "South Africa"),
    ("sgs", "South Georgia and the South Sandwich Islands"),
    ("kor", "South Korea"),
    ("ssd", "South Sudan"),
    ("esp", "Spain"),
    ("lka", "Sri Lanka"),
    ("sdn", "Sudan"),
    ("sur", "Suriname"),
    ("sjm", "Svalbard and Jan Mayen"),
    ("swe", "Sweden"),
    ("che", "Switzerland"),
    ("syr", "Syria"),
    ("twn", "Taiwan"),
    ("tjk", "Tajikistan"),
    ("tza", "Tanzania"),
    ("tha", "Thailand"),
    ("tgo", "Togo"),
    ("tkl", "Tokelau"),
    ("ton", "Tonga"),
    ("tto", "Trinidad and Tobago"),
    ("tun", "Tunisia"),
    ("tur", "Turkey"),
    ("tkm", "Turkmenistan"),
    ("tca", "Turks and Caicos Islands"),
    ("tuv", "Tuvalu"),
    ("uga", "Uganda"),
    ("ukr", "Ukraine"),
    ("are", "United Arab Emirates"),
    ("gbr", "United Kingdom"),
    ("usa", "United States"),
    ("umi", "United States Minor Outlying Islands"),
    ("vir", "United States Virgin Islands"),
    ("ury", "Uruguay"),
    ("uzb", "Uzbekistan"),
    ("vut", "Vanuatu"),
    ("vat", "Vatican City"),
    ("ven", "Venezuela"),
    ("vnm", "Vietnam"),
    ("wlf", "Wallis and Futuna"),
    ("esh", "Western Sahara"),
    ("yem", "Yemen"),
    ("zmb", "Zambia"),
    ("zwe", "Zimbabwe"),
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn tags_split_into_kind_label_and_score() {
        assert_eq!(
            parse_tag("classification.prediction.articletopic/STEM.Biology|939"),
            Some((Kind::Topic, "STEM.Biology", 939))
        );
        assert_eq!(
            parse_tag("classification.prediction.articlecountry/United States|1000"),
            Some((Kind::Country, "United States", 1000))
        );
        assert_eq!(parse_tag("recommendation.link/exists|1"), None);
        assert_eq!(
            parse_tag("classification.ores.articletopic/STEM.Biology|939"),
            None
        );
        assert_eq!(
            parse_tag("classification.prediction.articletopic/STEM.Space"),
            Some((Kind::Topic, "STEM.Space", 1000))
        );
    }

    #[test]
    fn requests_become_keywords_as_production_builds_them() {
        // `+` separates keywords (all must match), `|` alternatives inside one.
        let f = TagFilter::from_request(Some("Women+Space|Biology"), None);
        assert_eq!(f.keywords.len(), 2);
        assert_eq!(f.keywords[0].terms, ["women"]);
        assert_eq!(f.keywords[1].terms, ["space", "biology"]);
        // Spaces become hyphens before the terms are looked up.
        let f = TagFilter::from_request(Some("Southern Africa|Food and drink"), None);
        assert_eq!(f.keywords[0].terms, ["southern-africa", "food-and-drink"]);
        assert!(
            f.keywords[0]
                .labels
                .contains(&"Geography.Regions.Africa.Southern Africa".to_owned())
        );
        // Unknown terms are dropped; a keyword left without any matches nothing.
        let f = TagFilter::from_request(Some("music+nonsense"), None);
        assert!(f.impossible);
        assert_eq!(f.unknown_terms, ["nonsense"]);
        let f = TagFilter::from_request(Some("music^2|nonsense"), Some("USA|can"));
        assert!(!f.impossible);
        assert_eq!(f.keywords[1].labels, ["United States", "Canada"]);
    }

    #[test]
    fn matching_needs_every_keyword() {
        let f = TagFilter::from_request(Some("women"), Some("usa"));
        let tags = |topics: Vec<&'static str>, countries: Vec<&'static str>| {
            move |k: Kind| match k {
                Kind::Topic => topics.clone(),
                Kind::Country => countries.clone(),
            }
        };
        assert!(f.matches(tags(vec!["Culture.Biography.Women"], vec!["United States"])));
        assert!(!f.matches(tags(vec!["Culture.Biography.Women"], vec!["Canada"])));
        assert!(!f.matches(tags(vec![], vec!["United States"])));
        assert_eq!(term_of_label(Kind::Topic, "STEM.Biology"), Some("biology"));
        assert_eq!(
            term_of_label(Kind::Topic, "Culture.Food and drink"),
            Some("food-and-drink")
        );
        assert_eq!(term_of_label(Kind::Country, "Canada"), Some("can"));
    }
}
