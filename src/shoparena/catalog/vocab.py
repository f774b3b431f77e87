"""Vocabularies of the synthetic catalog generator (:mod:`shoparena.catalog.synth`).

Everything here is invented for shoparena in a Lazada-Philippines flavour: departments, a category tree of
2-6 levels, product kinds (nouns, adjectives, attribute keys, SKU schemes, price level), several hundred
attribute keys with lower-case value pools, title noise and text templates. The tables are plain tuples and
dicts so that generation stays fast and deterministic (no sets are iterated anywhere).

Compact text blocks are parsed once at import: ``key: v1|v2|v3`` or ``key: @pool`` for attributes.
"""

from __future__ import annotations

from dataclasses import dataclass


def _split(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split("|") if part.strip())


# --------------------------------------------------------------------------------------------------------
# Value pools shared by attributes and SKU options (all lower-case).
# --------------------------------------------------------------------------------------------------------

POOLS: dict[str, tuple[str, ...]] = {
    "color": _split(
        "black|white|red|blue|navy blue|sky blue|light blue|dark blue|green|army green|mint green|yellow|"
        "mustard|orange|pink|rose gold|purple|violet|lavender|brown|coffee|khaki|beige|cream|apricot|grey|"
        "gray|dark grey|silver|gold|multicolor|clear|transparent|maroon|wine red|peach|nude|champagne|"
        "off white|yellow green|black white|olive|teal|fuchsia|camel"
    ),
    "apparel_size": _split(
        "int:xs|int:s|int:m|int:l|int:xl|int:xxl|int:3xl|int:4xl|int:5xl|int: one size|s|m|l|xl|xxl|free size"
    ),
    "shoe_size": _split(
        "eu:35|eu:36|eu:37|eu:38|eu:39|eu:40|eu:41|eu:42|eu:43|eu:44|eu:45|us:5|us:6|us:7|us:8|us:9|us:10|"
        "us:11|eu: 43|36|37|38|39|40"
    ),
    "waist": _split(
        "waist:26|waist:27|waist:28|waist:29|waist:30|waist:31|waist:32|waist:34|waist:36|waist:38"
    ),
    "kids_size": _split(
        "0-3 months|3-6 months|6-12 months|1-2 years|2-3 years|3-4 years|4-5 years|5-6 years"
    ),
    "ring_size": _split("5|6|7|8|9|10|11|12"),
    "quantity": _split("1pc|2pcs|3pcs|5pcs|10pcs|12pcs|20pcs|50pcs|100pcs|1 set|2 sets|1 box"),
    "variation": _split(
        "a|b|c|d|set a|set b|type a|type b|style 1|style 2|style 3|standard|upgraded|basic|premium|"
        "with box|without box|1pc|2pcs|bundle|single"
    ),
    "phone_model": _split(
        "iphone 11|iphone 12|iphone 13|iphone 14|iphone 15|iphone 13 pro max|iphone 14 pro|samsung a14|"
        "samsung a54|samsung s23|redmi note 12|redmi 12c|oppo a17|oppo a78|vivo y16|vivo y36|realme c55|"
        "infinix hot 30|tecno spark 10|huawei nova 9"
    ),
    "scent": _split(
        "lavender|vanilla|sakura|rose|citrus|lemon|ocean breeze|baby powder|coconut|green tea|jasmine|"
        "sampaguita|unscented|strawberry|mint|musk"
    ),
    "flavor": _split(
        "original|chocolate|strawberry|ube|mango|cheese|barbecue|sour cream|spicy|sweet|salted caramel|"
        "matcha|coffee|vanilla|calamansi|garlic|adobo|buko pandan"
    ),
    "volume": _split("30ml|50ml|100ml|150ml|200ml|250ml|300ml|500ml|750ml|1l|1.5l|2l|5l"),
    "weight": _split("50g|100g|150g|200g|250g|500g|1kg|2kg|5kg|10kg|25kg"),
    "storage": _split("16gb|32gb|64gb|128gb|256gb|512gb|1tb|2tb"),
    "ram": _split("2gb|3gb|4gb|6gb|8gb|12gb|16gb|32gb"),
    "wattage": _split("5w|10w|15w|18w|20w|25w|33w|45w|65w|100w|300w|500w|800w|1000w|1500w|2000w"),
    "length": _split("0.5m|1m|1.5m|2m|3m|5m|10m|20m"),
    "inch": _split('8"|10"|12"|14"|16"|18"|20"|24"|32"|43"|50"|55"'),
    "shade": _split(
        "01|02|03|04|05|06|07|08|10|12|21|23|ivory|natural|sand|honey|warm beige|light|medium|tan"
    ),
    "yesno": _split("yes|no"),
    "material": _split(
        "plastic|stainless steel|wood|rubber|metal|silicone|pvc|polyester|nylon|brass|aluminium|aluminum|"
        "mixed|canvas|fabric|abs|glass|ceramic|bamboo|leather|pu leather|acrylic|cotton|iron|alloy|paper|"
        "tempered glass|carbon steel|microfiber|eva|foam|resin"
    ),
    "cloth_material": _split(
        "cotton|polyester|denim|cotton spandex|lace|knits|silk|nylon|spandex|linen|rayon|chiffon|satin|"
        "100% cotton|100% polyester|fleece|corduroy|jersey|other material|cotton blend|velvet|crepe"
    ),
    "pattern": _split(
        "plain|graphic print|floral|embroidery|cartoon|solid|print|stripe|lace|animal print|checkered|"
        "plaid|polka dot|camouflage|letter|leopard|geometric|tie dye|abstract"
    ),
    "style": _split(
        "casual|korean|basic|streetwear|vintage|elegant|sporty|minimalist|bohemian|office|y2k|formal|"
        "preppy|classic|cute|sexy|retro"
    ),
    "occasion": _split("casual|party|office|wedding|beach|sports|daily|travel|formal|date|school"),
    "season": _split("summer|all season|rainy season|spring|autumn|winter"),
    "gender": _split("women|men|unisex|kids|boys|girls|baby"),
    "age": _split(
        "0-6 months|6-12 months|1-2 years|3 years and up|3-5 years|6 years and up|8 years and up|"
        "12 years and up|14 years and up|adults"
    ),
    "warranty_type": _split(
        "no warranty|local supplier warranty|international manufacturer warranty|local manufacturer warranty|"
        "seller warranty|brand warranty"
    ),
    "warranty_period": _split("7 days|15 days|1 month|3 months|6 months|1 year|2 years|3 years"),
    "country": _split(
        "china|philippines|japan|korea|thailand|taiwan|malaysia|indonesia|vietnam|usa|germany|hong kong"
    ),
    "units": _split("single item|multi-pack|bundle|set|pair"),
    "voltage": _split("3.7v|5v|12v|24v|110v|220v|220-240v|100-240v"),
    "plug": _split("type a|type c|type g|type i|usb|usb-c|lightning|micro usb|universal"),
    "skin": _split("all skin types|oily|dry|combination|sensitive|normal|acne-prone|mature"),
    "finish": _split("matte|glossy|satin|velvet|shimmer|metallic|dewy|natural|sheer|cream"),
    "hair": _split("all hair types|dry|oily|damaged|colored|curly|straight|thinning|frizzy"),
    "packaging": _split("bottle|box|pouch|jar|tube|sachet|can|bag|blister pack|carton|pump bottle|refill"),
    "connectivity": _split("bluetooth|wireless|wired|usb|wifi|bluetooth 5.0|bluetooth 5.3|2.4g wireless|nfc"),
    "battery": _split("500mah|1000mah|1200mah|2000mah|3000mah|5000mah|10000mah|20000mah|30000mah"),
    "condition": _split("new|brand new|refurbished"),
    "motorcycle_make": _split("honda|yamaha|suzuki|kawasaki|rusi|motorstar|kymco|sym|universal"),
    "motorcycle_model": _split(
        "honda click 125i/150i|yamaha nmax v2|yamaha aerox|honda beat|yamaha mio i 125|suzuki raider 150|"
        "honda tmx 155|yamaha sniper 155|honda adv 160|suzuki smash|kawasaki barako|universal"
    ),
    "car_make": _split("toyota|mitsubishi|honda|nissan|ford|hyundai|suzuki|isuzu|kia|mazda|universal"),
    "pet": _split("dog|cat|puppy|kitten|bird|fish|hamster|rabbit|small animal|all pets"),
    "pet_stage": _split("puppy|kitten|adult|senior|all life stages"),
    "paper_size": _split("a4|a5|a6|letter|legal|short|long|b5"),
    "room": _split("living room|bedroom|kitchen|bathroom|office|outdoor|dining room|kids room|garden"),
    "shape": _split("round|square|rectangle|oval|heart|star|irregular|hexagon|triangle"),
    "pieces": _split("1|2|3|4|5|6|8|10|12|16|20|24|36|50|100"),
    "speed": _split("1 speed|2 speeds|3 speeds|5 speeds|variable speed|12 speeds"),
    "screen": _split("lcd|led|oled|amoled|ips|tft|e-ink|touchscreen|no screen"),
    "yesno_na": _split("yes|no|not applicable"),
}

# --------------------------------------------------------------------------------------------------------
# Attribute keys (several hundred, long tail). ``key: @pool`` reuses a pool; otherwise ``v1|v2|...``.
# --------------------------------------------------------------------------------------------------------

_ATTRIBUTE_TEXT = """
brand: @brand
model: oem|universal|standard|2023|2024|2024 new|pro|pro max|mini|lite|plus|x1|x2|v2|v3|basic|classic|s1|m1
units_hb: @units
warranty_type: @warranty_type
warranty_period: @warranty_period
country_origin_hb: @country
color_family: @color
material: @material
condition: @condition
brand_classification: premium|mass|budget|luxury|local brand|international brand
packaging_type: @packaging
pack_type: single|multi-pack|bundle|refill|trial size
is_unisex: @yesno
eco_credentials: recyclable|biodegradable|eco-friendly|organic|not applicable|bpa free
special_feature: waterproof|portable|foldable|rechargeable|adjustable|lightweight|durable|anti-slip|washable
clothing_material: @cloth_material
fa_pattern: @pattern
fa_general_styles: @style
fa_season: @season
fa_create_year: 2021|2022|2023|2024
occasion: @occasion
sleeves: short sleeve|long sleeve|sleeveless|3/4 sleeve|puff sleeve|cap sleeve
collar_type: round neck|v-neck|polo collar|high neck|square neck|off shoulder|hooded|collarless
m_top_neckline: round neck|v-neck|henley|crew neck|turtleneck
w_blouse_sleevestyle: puff sleeve|bell sleeve|regular|batwing|ruffle sleeve
top_fit_types: regular|slim|loose|oversized|cropped|boxy
pants_fit_type: straight|skinny|wide leg|jogger|slim|loose|bootcut|cargo
pants_length: full length|ankle length|3/4|shorts|cropped
jeans_fit_type: skinny|straight|mom jeans|boyfriend|wide leg|slim fit|bootcut
waist_type: high waist|mid waist|low waist|elastic waist|garterized
dress_shape: a-line|bodycon|shift|wrap|maxi|slip|shirt dress|fit and flare
dress_length: mini|midi|maxi|knee length|above knee
size_class: regular|plus size|petite|tall|maternity
recommended_gender: @gender
thematic_graphic_design: anime|cartoon|band|typography|sports|nature|abstract|movie|none
swimwear_type: one-piece|bikini|rash guard|board shorts|tankini|cover-up
underwear_type: brief|boxer|trunks|panty|bikini cut|boyleg|seamless
bra_type: wireless|push-up|sports bra|bralette|padded|nursing
sleepwear_type: pajama set|nightgown|robe|sleep shirt|terno
fabric_weight: lightweight|midweight|heavyweight
fa_closure: button|zipper|drawstring|hook and eye|pull on|snap
sneaker_upperheight: low top|mid top|high top
shoes_closuretype: lace-up|slip on|velcro|buckle|zipper|elastic
type_of_heels: block heel|stiletto|wedge|kitten heel|platform|flat
toe_shape: round toe|pointed toe|square toe|open toe|peep toe
shoe_material: @material
sole_material: rubber|eva|pu|tpr|phylon|leather
heel_height: flat|low (1-3cm)|mid (3-5cm)|high (5-8cm)|very high (8cm+)
sandals_type: slides|flip flops|strappy|gladiator|sport sandals
sports_shoe_type: running|basketball|training|walking|badminton|futsal|hiking
bag_material: @material
bag_size: mini|small|medium|large|extra large
strap: adjustable|detachable|chain|single handle|double handle|crossbody strap
closure_type: zipper|magnetic|button|drawstring|flap|open top|buckle
number_of_compartments: 1|2|3|4|5|multiple
laptop_compartment: @yesno
luggage_size: 18 inch|20 inch|24 inch|28 inch|32 inch
leather_material: genuine leather|pu leather|faux leather|vegan leather|split leather
wallet_type: long wallet|bifold|trifold|card holder|coin purse
belt_material: leather|pu leather|canvas|nylon|elastic
belt_styles: casual|formal|reversible|braided|automatic buckle
watch_dial_size: 28mm|32mm|36mm|38mm|40mm|42mm|44mm|46mm
watch_strap_material: leather|stainless steel|silicone|nylon|mesh|resin|ceramic
watch_strap_color: @color
movement: quartz|automatic|mechanical|digital|solar
movement_country: japan|switzerland|china|germany
case_shape: round|square|rectangle|tonneau|octagon
case_material: stainless steel|alloy|plastic|titanium|ceramic|resin
water_resistance: 30m|50m|100m|200m|not water resistant|ip67|ip68
main_stone: cubic zirconia|pearl|crystal|none|diamond|moissanite|jade|opal
colored_gem_type: ruby|sapphire|emerald|amethyst|topaz|none
jewelry_material: sterling silver|925 silver|stainless steel|gold plated|18k gold|titanium steel|alloy|copper
necklace_length: 40cm|45cm|50cm|55cm|60cm|adjustable
earring_type: stud|hoop|drop|clip-on|ear cuff|huggie
eyewear_frame: full rim|half rim|rimless|cat eye|aviator|round|square
lens_feature: polarized|uv400|anti-blue light|photochromic|mirrored|gradient
hair_accessories: clips|headband|scrunchies|hair tie|claw clip|hairpin
skin_type: @skin
finish_lipstick: @finish
finish: @finish
product_form: cream|gel|liquid|powder|serum|oil|foam|balm|stick|spray|lotion|sheet mask|bar
body_benefits: moisturizing|whitening|brightening|firming|anti-aging|soothing|exfoliating|hydrating
facial_care_concern: acne|dark spots|pores|wrinkles|dullness|dryness|oil control|redness
concerns_hair_care: hair fall|dandruff|frizz|damage repair|color protection|volume|scalp care
hair_type: @hair
ingredient_preference: paraben free|fragrance free|alcohol free|natural|vegan|sulfate free|cruelty free
fragrance_family: floral|fruity|woody|fresh|oriental|citrus|gourmand|aquatic|musky
fragrance_concentration: eau de parfum|eau de toilette|eau de cologne|body mist|perfume oil
spf: spf 15|spf 30|spf 50|spf 50+|none
makeup_coverage: sheer|light|medium|full|buildable
shade_range: fair|light|medium|tan|deep
nail_product_type: nail polish|gel polish|press on nails|nail art|top coat|base coat
travel_size: regular size|travel size|mini|sample
volume: @volume
net_weight: @weight
skincare_set: @yesno
shaving_type: razor|electric shaver|trimmer|wax strips|epilator
oral_care_type: toothbrush|toothpaste|mouthwash|floss|whitening strips|tongue cleaner
health_benefit: immune support|energy|digestion|sleep|joint support|weight management|skin health|multivitamin
dietary_needs: halal|vegan|vegetarian|gluten free|sugar free|keto|low fat|dairy free|organic
supplement_form: capsule|tablet|softgel|powder|gummies|liquid|sachet
medical_device_type: thermometer|blood pressure monitor|pulse oximeter|nebulizer|glucometer|first aid kit
mask_type: surgical|kn95|kf94|cloth|3-ply|n95
organic: @yesno
recommended_age: @age
minimum_recommended_age_from: @age
maximum_recommended_age_to: 2 years|5 years|8 years|12 years|14 years|adults
baby_material: cotton|bamboo|silicone|bpa-free plastic|muslin|organic cotton|polyester
diaper_size: newborn|small|medium|large|xl|xxl|xxxl
diaper_type: tape|pants|cloth|swim
feeding_type: bottle|sippy cup|teether|pacifier|breast pump|bib|feeding set
stroller_type: lightweight|travel system|jogging|umbrella|twin
toy_type: building blocks|doll|action figure|puzzle|plush|rc car|educational|board game|ride-on|playset
battery_required: @yesno
number_of_pieces: @pieces
educational_focus: math|language|science|motor skills|creativity|stem|music|memory
character: dinosaur|unicorn|robot|princess|superhero|animal|car|space|none
interest: animals|vehicles|space|music|art|sports|fantasy|science
food_type: snacks|noodles|canned goods|condiments|beverages|baking|rice|coffee|chips|biscuits|candy
flavor: @flavor
shelf_life: 3 months|6 months|9 months|12 months|18 months|24 months
storage_condition: room temperature|refrigerate|frozen|cool dry place
beverage_type: coffee|tea|juice|soda|energy drink|powdered drink|water|milk|3-in-1
caffeine: caffeinated|decaf|caffeine free
halal: @yesno
pack_size: 1|2|3|4|6|10|12|24|30|48
coffee_roast: light roast|medium roast|dark roast|espresso
rice_type: jasmine|dinorado|sinandomeng|brown rice|glutinous|red rice
room_type: @room
furniture_material: @material
assembly_required: @yesno
bedding_size: single|double|queen|king|super king|twin|crib
thread_count: 200|300|400|600|800|1000
bedding_material: cotton|microfiber|polyester|bamboo|linen|satin|canvas
curtain_type: blackout|sheer|eyelet|rod pocket|roman blind|door curtain|shower curtain
curtain_material: polyester|linen|velvet|blackout fabric|lace|cotton
curtain_features: blackout|thermal insulated|waterproof|anti-mosquito|noise reducing
cookware_material: stainless steel|non-stick|cast iron|aluminum|ceramic|granite|copper|enamel
cookware_set: @yesno
induction_compatible: @yesno
dishwasher_safe: @yesno
kitchen_tool_type: spatula|ladle|tongs|whisk|peeler|grater|knife|cutting board|strainer|can opener
storage_type: container|organizer|rack|basket|drawer|box|shelf|hook|bin
storage_capacity: 1l|2l|5l|10l|20l|30l|50l|100l
cleaning_type: mop|broom|brush|sponge|cloth|vacuum bag|spray|detergent|trash bag
detergent_form: powder|liquid|pods|bar|gel|sheets
light_bulb_type: led|fluorescent|incandescent|halogen|smart bulb|cfl
light_bulb_colour: warm white|cool white|daylight|rgb|yellow|neutral white
light_type: ceiling light|wall lamp|desk lamp|string lights|floodlight|night light|solar light|strip light
lamp_base: e27|e14|gu10|b22|t8|usb
paint_finish: matte|gloss|semi-gloss|satin|eggshell|flat
paint_adhesive_glue: super glue|epoxy|wood glue|silicone sealant|hot glue|spray paint|acrylic paint
door_security_type: smart lock|padlock|door chain|deadbolt|digital lock|door stopper
garden_type: seeds|pots|tools|soil|fertilizer|hose|sprinkler|planter
seed_type: vegetable|flower|herb|fruit|grass|microgreens
plant_type: indoor|outdoor|succulent|herb|flowering|air plant
bath_type: shower head|towel|bath mat|soap dispenser|toilet brush|bidet|shower caddy
towel_size: face towel|hand towel|bath towel|beach towel
decor_type: wall art|vase|clock|mirror|figurine|artificial flower|photo frame|candle|wall sticker
frame_material: wood|plastic|metal|glass|acrylic|mdf
mattress_type: foam|spring|latex|memory foam|orthopedic|foldable
pillow_type: memory foam|cotton|polyester fiber|latex|buckwheat|neck pillow
power_consumption: @wattage
input_voltage: @voltage
plug_type: @plug
appliance_capacity: 0.5l|1l|1.5l|1.8l|2l|3l|4l|5l|7l|8kg|10kg
fan_features: remote control|timer|oscillating|rechargeable|bladeless|mist|usb powered
fan_type: stand fan|desk fan|wall fan|ceiling fan|tower fan|clip fan|neck fan|exhaust fan
number_of_speeds: @speed
energy_rating: 1 star|2 stars|3 stars|4 stars|5 stars|inverter
cooling_capacity: 0.5hp|0.75hp|1hp|1.5hp|2hp|2.5hp
kitchen_appliance_type: rice cooker|air fryer|blender|electric kettle|toaster|microwave|induction cooker
air_fryer_capacity: 2l|3.5l|4l|5l|6l|8l|12l
blender_type: personal|countertop|hand blender|portable|juicer
iron_type: steam iron|dry iron|garment steamer|handheld steamer
vacuum_type: handheld|stick|robot|wet and dry|cordless|upright
cordless: @yesno
timer_function: @yesno
remote_control: @yesno
smart_home_compatible: alexa|google home|tuya|smart life|not applicable
screen_size: @inch
display_type: @screen
resolution: hd|full hd|4k|2k|720p|1080p|8k
refresh_rate: 60hz|75hz|120hz|144hz|165hz|240hz
tv_type: smart tv|android tv|led tv|google tv|webos|basic tv
hdmi_ports: 1|2|3|4
storage_capacity_hb: @storage
ram_memory: @ram
processor_type: intel core i3|intel core i5|intel core i7|amd ryzen 3|amd ryzen 5|amd ryzen 7|celeron|mediatek
operating_system: windows 11|windows 10|android|ios|macos|chrome os|linux|no os
battery_capacity: @battery
connectivity: @connectivity
bluetooth_version: 4.2|5.0|5.1|5.2|5.3|5.4
headphone_type: in-ear|over-ear|on-ear|earbuds|neckband|bone conduction|open ear
headphone_features: noise cancelling|waterproof|microphone|touch control|low latency|enc
speaker_type: portable|soundbar|party speaker|smart speaker|bookshelf|subwoofer
ptb_speaker_features: bass boost|waterproof|tws pairing|rgb lights|fm radio|karaoke
camera_type: action camera|instant camera|dslr|mirrorless|webcam|dashcam|cctv|ip camera
camera_back: 12mp|16mp|24mp|48mp|50mp|64mp|108mp
security_camera_feature: night vision|two-way audio|motion detection|360 rotation|cloud storage|color vision
megapixels: 2mp|3mp|4mp|5mp|8mp|12mp|20mp
lens_mount: canon ef|nikon f|sony e|fujifilm x|micro four thirds|none
keyboard_type: mechanical|membrane|wireless|gaming|compact|numeric keypad
switch_type: red switch|blue switch|brown switch|optical|silent|linear
mouse_type: wireless|wired|gaming|vertical|silent click|bluetooth
dpi: 800|1200|1600|3200|6400|12000|16000
gaming_platform: pc|playstation|xbox|nintendo switch|mobile|universal
printer_type: inkjet|laser|thermal|photo printer|all-in-one|ink tank
ink_color: black|cyan|magenta|yellow|tri-color|4 color set
network_type: wifi 5|wifi 6|4g lte|5g|dual band|mesh
router_ports: 1|2|3|4|5|8
cable_type: usb-c to usb-c|usb-a to usb-c|lightning|micro usb|hdmi|aux|ethernet|3 in 1
cable_length: @length
charger_output: @wattage
fast_charging: @yesno
number_of_ports: 1|2|3|4|6
compatible_devices: iphone|android|samsung|universal|ipad|laptop|macbook|nintendo switch
compatibility_by_model: @phone_model
brand_compatibility: apple|samsung|xiaomi|oppo|vivo|realme|huawei|infinix|universal
case_function: shockproof|magnetic|card holder|kickstand|waterproof|slim|anti-yellow|clear
phonecase_theme: cartoon|aesthetic|plain|glitter|floral|anime|couple|marble|minimalist
screen_protector_type: tempered glass|hydrogel|privacy|matte|anti-blue light|full cover|camera lens
mount_type: car vent|dashboard|bike mount|desk stand|ring holder|magnetic|tripod
powerbank_capacity: @battery
network_mode: 4g|5g|dual sim|single sim
sim_type: nano sim|esim|dual nano sim
phone_storage: @storage
tablet_size: 8 inch|10 inch|10.1 inch|11 inch|12.9 inch
stylus_type: active|passive|magnetic|palm rejection
smartwatch_features: heart rate|spo2|gps|sleep tracking|calls|ip68|amoled
activity_type: running|gym|yoga|cycling|swimming|basketball|badminton|hiking|boxing|camping
sport_features: quick dry|breathable|anti-slip|adjustable|lightweight|sweat absorbent|compression
sports_material: @material
fitness_equipment_type: dumbbell|resistance band|yoga mat|jump rope|ab roller|pull up bar|kettlebell
weight_capacity: 50kg|100kg|120kg|150kg|200kg
dumbbell_weight: 1kg|2kg|3kg|5kg|10kg|20kg|adjustable
bicycle_type: mountain bike|road bike|folding bike|bmx|kids bike|e-bike
bike_part: brake|chain|saddle|pedal|tire|inner tube|handlebar|light|bell
wheel_size: 12 inch|16 inch|20 inch|24 inch|26 inch|27.5 inch|29 inch|700c
racket_sport: badminton|tennis|table tennis|pickleball|squash
string_tension: 20-22 lbs|22-24 lbs|24-26 lbs|26-28 lbs|28-30 lbs
ball_size: size 3|size 4|size 5|size 6|size 7|official size
camping_type: tent|sleeping bag|camping chair|lantern|cooler|hammock|backpack
tent_capacity: 1 person|2 persons|3-4 persons|5-6 persons|8 persons
swimming_gear: goggles|swim cap|earplugs|kickboard|swim ring|snorkel
make: @car_make
motorcycle_make: @motorcycle_make
motorcycle_model: @motorcycle_model
component_type: brake pads|spark plug|air filter|oil filter|headlight|side mirror|horn|clutch|chain|battery
auto_light_source_color: white|yellow|ice blue|rgb|red|6000k|3000k
auto_light_type: led|halogen|hid|xenon|projector
oil_type: fully synthetic|semi synthetic|mineral|4t|2t
viscosity: 10w-40|5w-30|20w-50|15w-40|0w-20|10w-30
tire_size: 70/90-14|80/90-14|90/80-14|100/80-14|110/70-12|185/65 r15|195/55 r16
helmet_type: full face|half face|modular|open face|dual visor
helmet_certification: icc|dot|ece|snell|sni
car_care_type: wax|shampoo|microfiber towel|tire black|polish|interior cleaner|coating
car_accessory_type: seat cover|floor mat|steering wheel cover|phone holder|dash cam|air freshener|organizer
fitment: universal|direct fit|custom fit
dog_shampoos_&_bath_accessories_type: shampoo|conditioner|towel|brush|dry shampoo|wipes
pet_food_type: dry food|wet food|treats|milk replacer|supplements
animal_type: @pet
dog_life_stage: @pet_stage
cat_life_stage: @pet_stage
pet_accessory_type: collar|leash|harness|bed|bowl|cage|litter box|toy|carrier|scratcher
litter_type: clumping|silica|tofu|pine|zeolite|paper
breed_size: small breed|medium breed|large breed|all breed sizes
stationery_pen_type: ballpoint|gel pen|fountain pen|marker|highlighter|brush pen|sign pen
stationery_line_point: 0.3mm|0.38mm|0.5mm|0.7mm|1.0mm|fine|medium|bold
stationery_notebook_type: spiral|composition|dotted|grid|planner|sketchbook|journal|binder
number_of_pages: 40|60|80|100|120|160|200|300
paper_size: @paper_size
art_supply_type: watercolor|acrylic paint|oil pastel|colored pencils|crayons|canvas|brush set
craft_type: diy kit|beads|yarn|clay|sticker|scrapbook|embroidery kit
knitting_tools: crochet hook|knitting needles|yarn|stitch markers|needle set
school_supply_type: backpack|pencil case|ruler|eraser|scissors|glue|calculator|sharpener
office_supply_type: stapler|folder|paper clip|tape|envelope|label maker|file organizer
book_genre: fiction|romance|self-help|children|educational|comics|cookbook|religious
language: english|filipino|tagalog|bilingual|chinese
power_tool_type: drill|grinder|saw|sander|impact driver|heat gun|rotary tool
power_tool_material_uses: wood|metal|concrete|plastic|tile|multi-purpose
power_tool_welder_type: mig|tig|arc|inverter|spot
tool_type_of_accessories: drill bits|saw blades|sanding discs|screwdriver bits|cutting discs
hand_tool_type: screwdriver|wrench|pliers|hammer|tape measure|utility knife|socket set|hex key
tool_set: @yesno
electrical_type: extension cord|switch|outlet|circuit breaker|wire|adapter|timer switch
safety_gear: gloves|goggles|hard hat|safety shoes|reflective vest|ear muffs
plumbing_type: faucet|pipe|valve|hose|shower set|sink|drain
tape_type: duct tape|electrical tape|masking tape|double sided|teflon|packing tape
sports_team: none|local|international
shape: @shape
size: small|medium|large|extra large|standard|free size|mini|jumbo
set_pieces: @pieces
design: plain|printed|embossed|engraved|transparent|textured
feature: foldable|portable|waterproof|rechargeable|anti-slip|heat resistant|reusable|adjustable
services: products only|with installation|with warranty card|with free gift
"""


def _parse_attributes(text: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for line in text.strip().splitlines():
        key, _, values = line.partition(":")
        key, values = key.strip(), values.strip()
        if values.startswith("@"):
            pool = values[1:]
            # "@brand" is filled per product from the brand tables, not from a pool.
            out[key] = () if pool == "brand" else POOLS[pool]
        else:
            out[key] = _split(values)
    return out


#: Attribute key -> lower-case value vocabulary (``brand`` is empty: values come from the brand tables).
ATTRIBUTES: dict[str, tuple[str, ...]] = _parse_attributes(_ATTRIBUTE_TEXT)

#: Values upstream shops put in the ``brand`` *attribute* when they have none (the ``brand`` field is "").
BRANDLESS_ATTRIBUTE_VALUES: tuple[str, ...] = ("no brand", "oem", "generic", "❤️no brand❤️", "none")

#: Junk spellings some shops type into the ``brand`` field; the generator writes "" for these, as upstream.
JUNK_BRAND_SPELLINGS: tuple[str, ...] = ("NoBrand", "No Brand", "OEM", "Generic", "N/A")

# --------------------------------------------------------------------------------------------------------
# SKU option schemes: key spellings (weighted) and the value pool.
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkuScheme:
    """One SKU option dimension: alternative key spellings with weights, and the value pool."""

    keys: tuple[tuple[str, float], ...]
    pool: str


SKU_SCHEMES: dict[str, SkuScheme] = {
    "color": SkuScheme(
        (
            ("color_family", 0.74),
            ("color family", 0.06),
            ("color", 0.14),
            ("colour", 0.03),
            ("color_text", 0.03),
        ),
        "color",
    ),
    "apparel_size": SkuScheme((("size", 0.93), ("sizes", 0.03), ("size_wear", 0.04)), "apparel_size"),
    "shoe_size": SkuScheme((("size", 0.95), ("shoe size", 0.05)), "shoe_size"),
    "waist": SkuScheme((("size", 1.0),), "waist"),
    "kids_size": SkuScheme((("size", 0.8), ("size_baby_clothing", 0.2)), "kids_size"),
    "ring_size": SkuScheme((("ring_size", 0.7), ("size", 0.3)), "ring_size"),
    "variation": SkuScheme(
        (("variation", 0.8), ("variation1", 0.06), ("options", 0.06), ("type", 0.08)), "variation"
    ),
    "quantity": SkuScheme((("quantity", 0.8), ("quantities", 0.1), ("items_per_each", 0.1)), "quantity"),
    "phone_model": SkuScheme((("compatibility_by_model", 0.85), ("model", 0.15)), "phone_model"),
    "scent": SkuScheme((("scent", 0.85), ("scents", 0.15)), "scent"),
    "flavor": SkuScheme((("variation", 0.5), ("flavor", 0.5)), "flavor"),
    "volume": SkuScheme((("volume", 0.9), ("specification", 0.1)), "volume"),
    "weight": SkuScheme((("net_weight", 0.6), ("variation", 0.4)), "weight"),
    "storage": SkuScheme((("storage_capacity", 0.7), ("capacity", 0.3)), "storage"),
    "wattage": SkuScheme((("power", 0.6), ("variation", 0.4)), "wattage"),
    "length": SkuScheme((("length", 0.8), ("cable_length", 0.2)), "length"),
    "shade": SkuScheme((("color_family", 0.6), ("shade", 0.4)), "shade"),
    "inch": SkuScheme((("size", 0.7), ("screen_size", 0.3)), "inch"),
    "ram": SkuScheme((("ram_memory", 0.6), ("variation", 0.4)), "ram"),
}

# --------------------------------------------------------------------------------------------------------
# Measures printed in titles (capacity, size, ...) and the attribute that mirrors them.
# --------------------------------------------------------------------------------------------------------

MEASURES: dict[str, tuple[tuple[str, ...], str]] = {
    "ml": (("30ml", "50ml", "100ml", "150ml", "200ml", "250ml", "500ml", "1L", "1.5L"), "volume"),
    "g": (("50g", "100g", "150g", "200g", "250g", "500g", "1kg", "2kg", "5kg"), "net_weight"),
    "mah": (("5000mAh", "10000mAh", "20000mAh", "30000mAh", "1200mAh", "3000mAh"), "battery_capacity"),
    "w": (("5W", "10W", "20W", "33W", "45W", "65W", "100W", "300W", "1000W", "1500W"), "power_consumption"),
    "gb": (("32GB", "64GB", "128GB", "256GB", "512GB", "1TB"), "storage_capacity_hb"),
    "inch": (
        ('10"', "12 inch", "14 Inch", "16inch", "24 Inch", "32 inch", "43 Inch", "55 Inch"),
        "screen_size",
    ),
    "l": (("1L", "1.5L", "1.8L", "2L", "3.5L", "5L", "6L", "8L", "10L", "20L"), "appliance_capacity"),
    "cm": (("20cm", "24cm", "26cm", "28cm", "30cm", "40x60cm", "50x80cm", "120x200cm"), "size"),
    "m": (("1M", "1.5m", "2M", "3m", "5M", "10m"), "cable_length"),
    "kg": (("1kg", "2kg", "3kg", "5kg", "10kg", "20kg"), "dumbbell_weight"),
}

# --------------------------------------------------------------------------------------------------------
# Departments and product kinds.
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Department:
    """A top-level family of categories; shops specialise in one or two."""

    weight: float
    empty_brand: float  # share of products with brand "" before the global scaling knob
    tail: tuple[str, ...]  # rarely used attribute keys (long tail)


DEPARTMENTS: dict[str, Department] = {
    "women": Department(
        0.12, 0.55, ("fa_create_year", "fabric_weight", "fa_closure", "size_class", "design")
    ),
    "men": Department(
        0.08, 0.5, ("fa_create_year", "fabric_weight", "fa_closure", "thematic_graphic_design")
    ),
    "shoes": Department(0.06, 0.4, ("heel_height", "sole_material", "is_unisex", "design")),
    "bags": Department(0.07, 0.45, ("number_of_compartments", "design", "feature", "is_unisex")),
    "beauty": Department(0.1, 0.2, ("eco_credentials", "travel_size", "packaging_type", "organic", "halal")),
    "health": Department(0.03, 0.25, ("organic", "halal", "pack_type", "packaging_type")),
    "baby": Department(0.06, 0.35, ("battery_required", "character", "interest", "set_pieces")),
    "grocery": Department(0.05, 0.1, ("halal", "organic", "pack_type", "storage_condition")),
    "home": Department(0.13, 0.45, ("shape", "design", "feature", "set_pieces", "eco_credentials")),
    "appliance": Department(
        0.05, 0.2, ("remote_control", "timer_function", "energy_rating", "smart_home_compatible")
    ),
    "electronics": Department(
        0.06, 0.25, ("condition", "special_feature", "cable_length", "number_of_ports")
    ),
    "mobile": Department(0.08, 0.4, ("condition", "special_feature", "fast_charging", "design")),
    "sports": Department(0.04, 0.4, ("weight_capacity", "feature", "is_unisex", "sports_team")),
    "auto": Department(0.04, 0.45, ("fitment", "condition", "design", "feature")),
    "pets": Department(0.02, 0.35, ("breed_size", "organic", "packaging_type", "design")),
    "office": Department(0.03, 0.4, ("set_pieces", "design", "language", "shape")),
    "tools": Department(0.03, 0.4, ("tool_set", "cordless", "input_voltage", "condition")),
}


@dataclass(frozen=True, slots=True)
class Kind:
    """A product kind: what the title is made of, which attributes and SKU options it carries, its price."""

    dept: str
    nouns: tuple[str, ...]
    adjs: tuple[str, ...]
    attrs: tuple[str, ...]
    sku: tuple[str, ...]  # SKU scheme names, at most two
    price: tuple[float, float]  # median PHP and log-normal sigma
    measures: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()  # title phrases ("for Men", "with Free Gift")


def _kind(
    dept: str,
    nouns: str,
    adjs: str,
    attrs: str,
    sku: str,
    price: tuple[float, float],
    measures: str = "",
    extras: str = "",
) -> Kind:
    return Kind(
        dept,
        _split(nouns),
        _split(adjs),
        tuple(attrs.split()),
        tuple(sku.split()),
        price,
        tuple(measures.split()),
        _split(extras),
    )


_FASHION_ADJS = "Korean Style|Oversized|Plain|Casual|Aesthetic|Basic|Unisex|Trendy|Vintage|Cute|Elegant|Comfy"

KINDS: dict[str, Kind] = {
    # Women's and men's clothing
    "w_top": _kind(
        "women",
        "Blouse|Top|Crop Top|T-Shirt|Tank Top|Off Shoulder Top|Knitted Top",
        _FASHION_ADJS + "|Ruffle|Floral|Sexy|Puff Sleeve",
        "clothing_material fa_pattern sleeves collar_type fa_general_styles w_blouse_sleevestyle "
        "top_fit_types occasion fa_season",
        "color apparel_size",
        (189, 0.55),
        extras="for Women|for Ladies|Free Size|Fits S-XL",
    ),
    "w_dress": _kind(
        "women",
        "Dress|Maxi Dress|Midi Dress|Bodycon Dress|Sundress|Wrap Dress|Shirt Dress",
        _FASHION_ADJS + "|Floral|Smocked|Backless|Formal|Boho",
        "clothing_material fa_pattern dress_shape dress_length sleeves occasion fa_general_styles",
        "color apparel_size",
        (329, 0.6),
        extras="for Women|Plus Size|Party Wear",
    ),
    "w_bottom": _kind(
        "women",
        "Jeans|Pants|Skirt|Shorts|Wide Leg Pants|Trouser|Jogger Pants|Leggings",
        _FASHION_ADJS + "|High Waist|Stretchable|Denim|Pleated",
        "clothing_material pants_fit_type waist_type pants_length jeans_fit_type fa_pattern",
        "color waist",
        (299, 0.55),
        extras="for Women|Plus Size",
    ),
    "w_inner": _kind(
        "women",
        "Bra|Panty|Sports Bra|Seamless Underwear|Sleepwear Set|Pajama Terno|Nightgown",
        "Seamless|Soft|Breathable|Wireless|Lace|Cotton|Sexy|Push Up|Cute|Comfy",
        "clothing_material bra_type underwear_type sleepwear_type fa_pattern size_class",
        "color apparel_size",
        (149, 0.6),
        extras="for Women|3 Pcs Set|Pack of 6",
    ),
    "m_top": _kind(
        "men",
        "T-Shirt|Polo Shirt|Shirt|Hoodie|Jacket|Sando|Long Sleeve Polo|Jersey",
        _FASHION_ADJS + "|Slim Fit|Quick Dry|Cotton|Streetwear|Polo",
        "clothing_material fa_pattern sleeves m_top_neckline collar_type top_fit_types fa_season "
        "thematic_graphic_design",
        "color apparel_size",
        (259, 0.55),
        extras="for Men|Men's|Unisex|Plus Size",
    ),
    "m_bottom": _kind(
        "men",
        "Cargo Pants|Jeans|Shorts|Chino Pants|Board Shorts|Jogger Pants|Trousers",
        _FASHION_ADJS + "|Slim Fit|Stretchable|Six Pocket|Drawstring",
        "clothing_material pants_fit_type waist_type pants_length jeans_fit_type fa_pattern",
        "color waist",
        (349, 0.55),
        extras="for Men|Men's",
    ),
    "m_inner": _kind(
        "men",
        "Brief|Boxer Shorts|Trunks|Undershirt|Sando|Socks",
        "Cotton|Breathable|Seamless|Stretchable|Antibacterial|Ice Silk|Comfy",
        "clothing_material underwear_type fa_pattern size_class",
        "color apparel_size",
        (129, 0.6),
        extras="for Men|Pack of 3|6pcs/Set|Box of 12",
    ),
    "kids_wear": _kind(
        "baby",
        "Baby Romper|Kids T-Shirt|Terno|Baby Dress|Onesie|Kids Pajama Set",
        "Cute|Cotton|Cartoon|Breathable|Soft|Printed",
        "clothing_material fa_pattern recommended_age recommended_gender baby_material",
        "color kids_size",
        (169, 0.55),
        extras="for Kids|for Baby Boy|for Baby Girl|Unisex",
    ),
    # Shoes
    "sneakers": _kind(
        "shoes",
        "Sneakers|Running Shoes|Rubber Shoes|Canvas Shoes|Basketball Shoes|White Shoes",
        "Breathable|Lightweight|Non Slip|Korean|Chunky|Casual|Sports|Unisex|Classic",
        "shoe_material sneaker_upperheight shoes_closuretype sports_shoe_type toe_shape recommended_gender",
        "color shoe_size",
        (699, 0.65),
        extras="for Men|for Women|Unisex",
    ),
    "sandals": _kind(
        "shoes",
        "Sandals|Slippers|Slides|Flip Flops|Platform Sandals|Beach Slippers",
        "Soft|Non Slip|Comfy|Thick Sole|Cute|Casual|Waterproof|Korean",
        "shoe_material sandals_type sole_material toe_shape recommended_gender",
        "color shoe_size",
        (229, 0.6),
        extras="for Women|for Men|Indoor Outdoor",
    ),
    "heels": _kind(
        "shoes",
        "Heels|Block Heels|Pumps|Doll Shoes|Loafers|Flats|Mules",
        "Elegant|Pointed|Korean|Formal|Comfy|Classic|Office",
        "shoe_material type_of_heels toe_shape heel_height shoes_closuretype",
        "color shoe_size",
        (449, 0.55),
        extras="for Women|for Ladies",
    ),
    # Bags, watches, jewellery, eyewear
    "bag": _kind(
        "bags",
        "Sling Bag|Tote Bag|Backpack|Shoulder Bag|Crossbody Bag|Belt Bag|Hand Bag|Laptop Bag",
        "Korean|Waterproof|Large Capacity|Canvas|Leather|Minimalist|Anti Theft|Trendy|Unisex",
        "bag_material bag_size strap closure_type laptop_compartment fa_general_styles",
        "color",
        (399, 0.7),
        extras="for Women|for Men|for School|for Travel",
    ),
    "wallet": _kind(
        "bags",
        "Wallet|Long Wallet|Card Holder|Coin Purse|Bifold Wallet",
        "Leather|Slim|Minimalist|RFID Blocking|Korean|Cute|Zipper",
        "wallet_type leather_material closure_type",
        "color",
        (249, 0.6),
        extras="for Men|for Women",
    ),
    "luggage": _kind(
        "bags",
        "Luggage|Travel Bag|Trolley Bag|Suitcase|Duffel Bag",
        "Hardcase|Expandable|Lightweight|Spinner|Waterproof|Foldable",
        "bag_material luggage_size closure_type",
        "color variation",
        (1899, 0.6),
        extras="with TSA Lock|Carry On|4 Wheels",
    ),
    "watch": _kind(
        "bags",
        "Watch|Analog Watch|Digital Watch|Sports Watch|Couple Watch",
        "Waterproof|Stainless|Luxury|Minimalist|Casual|Classic|Korean|LED",
        "watch_dial_size watch_strap_material watch_strap_color movement movement_country case_shape "
        "case_material water_resistance",
        "color",
        (599, 0.8),
        extras="for Men|for Women|with Box",
    ),
    "jewelry": _kind(
        "bags",
        "Necklace|Bracelet|Earrings|Ring|Anklet|Pendant",
        "925 Silver|Gold Plated|Non Tarnish|Minimalist|Dainty|Korean|Hypoallergenic|Stainless",
        "jewelry_material main_stone colored_gem_type necklace_length earring_type",
        "color ring_size",
        (199, 0.8),
        extras="for Women|Couple|with Gift Box",
    ),
    "eyewear": _kind(
        "bags",
        "Sunglasses|Eyeglasses|Anti Radiation Glasses|Reading Glasses",
        "Polarized|UV400|Retro|Oversized|Square|Round|Anti Blue Light|Unisex",
        "eyewear_frame lens_feature case_material recommended_gender",
        "color",
        (249, 0.6),
        extras="for Men|for Women|with Case",
    ),
    "hair_acc": _kind(
        "bags",
        "Hair Clip|Claw Clip|Headband|Scrunchies|Hair Tie",
        "Korean|Cute|Pearl|Acrylic|Aesthetic|Elastic|Big",
        "hair_accessories material",
        "color quantity",
        (69, 0.6),
        extras="12pcs Set|for Women|for Girls",
    ),
    # Beauty
    "skincare": _kind(
        "beauty",
        "Facial Serum|Moisturizer|Face Cream|Toner|Facial Wash|Sunscreen|Sheet Mask",
        "Brightening|Whitening|Hydrating|Niacinamide|Hyaluronic|Vitamin C|Retinol|Anti Acne|Korean",
        "skin_type product_form body_benefits facial_care_concern ingredient_preference spf skincare_set",
        "variation",
        (299, 0.75),
        "ml g",
        extras="FDA Approved|Set|Travel Size",
    ),
    "makeup": _kind(
        "beauty",
        "Lipstick|Lip Tint|Foundation|Cushion|Face Powder|Eyeliner|Mascara|Blush On",
        "Matte|Long Lasting|Waterproof|Velvet|Glossy|Transfer Proof|Korean|Smudge Proof",
        "finish_lipstick makeup_coverage shade_range skin_type product_form",
        "shade",
        (199, 0.7),
        extras="FDA Approved|Mini|Set",
    ),
    "bodycare": _kind(
        "beauty",
        "Body Lotion|Body Wash|Soap|Deodorant|Scrub|Whitening Lotion|Body Mist",
        "Whitening|Moisturizing|Kojic|Glutathione|Papaya|Organic|Fresh|Fragrant",
        "skin_type body_benefits product_form ingredient_preference",
        "scent",
        (169, 0.7),
        "ml g",
        extras="Buy 1 Take 1|Family Size|Twin Pack",
    ),
    "haircare": _kind(
        "beauty",
        "Shampoo|Conditioner|Hair Serum|Hair Oil|Hair Mask|Hair Color|Hair Treatment",
        "Keratin|Anti Dandruff|Anti Hair Fall|Argan Oil|Sulfate Free|Smoothening|Herbal",
        "hair_type concerns_hair_care product_form ingredient_preference",
        "variation",
        (219, 0.7),
        "ml",
        extras="Salon Grade|Twin Pack",
    ),
    "fragrance": _kind(
        "beauty",
        "Perfume|Eau de Parfum|Body Spray|Cologne|Oil Perfume",
        "Long Lasting|Inspired|Fresh|Sweet|Luxury|Unisex|Travel Size",
        "fragrance_family fragrance_concentration recommended_gender",
        "scent",
        (299, 0.8),
        "ml",
        extras="for Women|for Men|Unisex",
    ),
    "nails": _kind(
        "beauty",
        "Nail Polish|Gel Polish|Press On Nails|Nail Art Kit|Nail Drill",
        "Quick Dry|Long Lasting|Glitter|Nude|Peel Off|Salon",
        "nail_product_type finish",
        "color variation",
        (119, 0.7),
        extras="24pcs|Set",
    ),
    "grooming": _kind(
        "beauty",
        "Hair Trimmer|Electric Shaver|Razor|Hair Dryer|Hair Straightener|Curling Iron",
        "Rechargeable|Cordless|Professional|Waterproof|Portable|Ceramic|Ionic",
        "shaving_type plug_type power_consumption cordless warranty_period",
        "color variation",
        (599, 0.7),
        "w",
        extras="for Men|with Free Gift",
    ),
    # Health
    "vitamins": _kind(
        "health",
        "Vitamin C|Multivitamins|Collagen|Fish Oil|Glutathione Capsule|Zinc|Probiotics",
        "Immune Booster|Sugar Free|Natural|Premium|High Potency|FDA Registered",
        "health_benefit supplement_form dietary_needs",
        "quantity",
        (399, 0.7),
        "g",
        extras="30 Capsules|60 Tablets|100 Softgels",
    ),
    "medical": _kind(
        "health",
        "Face Mask|Digital Thermometer|Pulse Oximeter|BP Monitor|First Aid Kit|Nebulizer",
        "Disposable|3 Ply|KN95|Medical Grade|Portable|Rechargeable|FDA Approved",
        "mask_type medical_device_type",
        "color quantity",
        (299, 0.95),
        extras="50pcs|Box of 50|for Adults|for Kids",
    ),
    "oral": _kind(
        "health",
        "Toothbrush|Toothpaste|Mouthwash|Electric Toothbrush|Dental Floss",
        "Whitening|Soft Bristle|Charcoal|Sonic|Fresh Mint|Sensitive",
        "oral_care_type product_form",
        "variation",
        (149, 0.8),
        "ml g",
        extras="Family Pack|2pcs",
    ),
    # Baby & toys
    "diaper": _kind(
        "baby",
        "Baby Diapers|Pants Diapers|Adult Diapers|Baby Wipes|Cloth Diaper",
        "Ultra Thin|Breathable|Leak Proof|Unscented|Soft|Hypoallergenic",
        "diaper_size diaper_type baby_material",
        "kids_size quantity",
        (399, 0.6),
        extras="Jumbo Pack|Value Pack|80pcs|Box of 4",
    ),
    "feeding": _kind(
        "baby",
        "Feeding Bottle|Sippy Cup|Teether|Breast Pump|Baby Bib|Pacifier",
        "BPA Free|Anti Colic|Silicone|Wide Neck|Soft|Electric",
        "feeding_type baby_material recommended_age",
        "color variation",
        (299, 0.7),
        "ml",
        extras="for Newborn|2pcs",
    ),
    "baby_gear": _kind(
        "baby",
        "Stroller|Baby Walker|Car Seat|Baby Carrier|Playpen|Crib",
        "Foldable|Lightweight|Portable|Adjustable|Safe|Multifunction",
        "stroller_type recommended_age weight_capacity baby_material",
        "color",
        (2499, 0.6),
        extras="for Newborn|0-3 Years",
    ),
    "toys": _kind(
        "baby",
        "Building Blocks|Toy Car|Doll House|Plush Toy|Puzzle|RC Car|Action Figure|Play Kitchen",
        "Educational|Cute|Interactive|Remote Control|Montessori|Wooden|Musical|Stem",
        "toy_type recommended_age minimum_recommended_age_from maximum_recommended_age_to "
        "battery_required number_of_pieces educational_focus character interest",
        "color variation",
        (299, 0.8),
        extras="for Kids|for Boys|for Girls|Gift Set",
    ),
    # Groceries
    "snacks": _kind(
        "grocery",
        "Chips|Cookies|Crackers|Chocolate|Dried Mango|Candy|Polvoron|Chicharon",
        "Crunchy|Sweet|Spicy|Homemade|Imported|Premium|Pasalubong|Sugar Free",
        "food_type flavor shelf_life dietary_needs pack_size",
        "flavor",
        (119, 0.6),
        "g",
        extras="Pack of 10|Family Size|Bundle",
    ),
    "beverage": _kind(
        "grocery",
        "Coffee|3in1 Coffee|Milk Tea|Green Tea|Powdered Juice|Energy Drink|Barley",
        "Instant|Premium|Original|Sugar Free|Imported|Local|Brewed",
        "beverage_type flavor caffeine coffee_roast shelf_life pack_size",
        "flavor",
        (189, 0.65),
        "g ml",
        extras="30 Sachets|Box of 12|Bundle",
    ),
    "pantry": _kind(
        "grocery",
        "Rice|Cooking Oil|Soy Sauce|Noodles|Canned Tuna|Corned Beef|Sardines|Seasoning",
        "Premium|Local|Imported|Organic|Spicy|Original|Value Pack",
        "food_type flavor shelf_life storage_condition rice_type pack_size",
        "weight",
        (149, 0.8),
        "g ml",
        extras="Pack of 3|Case of 24|Bundle",
    ),
    # Home & living
    "bedding": _kind(
        "home",
        "Bedsheet Set|Comforter|Pillow|Pillow Case|Blanket|Mattress Topper|Fitted Sheet",
        "Cotton|Soft|Hotel Quality|Korean|Plain|Printed|Cooling|Fluffy",
        "bedding_size thread_count bedding_material pillow_type mattress_type fa_pattern",
        "color variation",
        (499, 0.6),
        "cm",
        extras="4 in 1|3 in 1 Set|Queen Size|Double",
    ),
    "curtain": _kind(
        "home",
        "Curtain|Blackout Curtain|Shower Curtain|Door Curtain|Window Blinds",
        "Blackout|Thick|Plain|Printed|Waterproof|Korean|Modern|Minimalist",
        "curtain_type curtain_material curtain_features room_type fa_pattern",
        "color variation",
        (279, 0.6),
        "cm",
        extras="with Hooks|1 Panel|2 Panels",
    ),
    "cookware": _kind(
        "home",
        "Frying Pan|Casserole|Wok|Cooking Pot|Kaldero|Steamer|Cookware Set|Grill Pan",
        "Non Stick|Stainless|Heavy Duty|Induction Ready|Granite|Cast Iron|Korean",
        "cookware_material cookware_set induction_compatible dishwasher_safe",
        "variation",
        (649, 0.7),
        "cm",
        extras="with Lid|5pcs Set|12 Piece",
    ),
    "kitchen_tools": _kind(
        "home",
        "Kitchen Knife|Chopping Board|Spatula Set|Food Container|Tumbler|Lunch Box",
        "Stainless|Heat Resistant|BPA Free|Airtight|Leak Proof|Microwavable|Insulated",
        "kitchen_tool_type material storage_capacity dishwasher_safe set_pieces",
        "color variation",
        (189, 0.7),
        "ml l",
        extras="Set of 3|with Lid|6pcs",
    ),
    "storage": _kind(
        "home",
        "Storage Box|Organizer|Drawer|Shoe Rack|Hanger|Laundry Basket|Wall Shelf",
        "Foldable|Stackable|Heavy Duty|Multi Layer|Transparent|Space Saving|Nordic",
        "storage_type material room_type storage_capacity assembly_required",
        "color variation",
        (249, 0.7),
        "l",
        extras="Set of 2|10pcs|3 Layers",
    ),
    "cleaning": _kind(
        "home",
        "Mop|Broom|Laundry Detergent|Dishwashing Liquid|Trash Bag|Disinfectant Spray",
        "Heavy Duty|Antibacterial|360 Rotating|Concentrated|Fresh Scent|Eco Friendly",
        "cleaning_type detergent_form material",
        "scent variation",
        (169, 0.7),
        "ml l",
        extras="Refill|Bundle of 3|Value Pack",
    ),
    "decor": _kind(
        "home",
        "Wall Clock|Vase|Artificial Plant|Photo Frame|Wall Sticker|LED Mirror|Scented Candle",
        "Nordic|Aesthetic|Minimalist|Vintage|Modern|Handmade|Boho",
        "decor_type frame_material room_type shape",
        "color variation",
        (229, 0.8),
        "cm",
        extras="for Living Room|Home Decor|Set of 3",
    ),
    "lighting": _kind(
        "home",
        "LED Bulb|Ceiling Light|Desk Lamp|String Lights|Solar Light|Night Light|Floodlight",
        "Energy Saving|Rechargeable|Waterproof|Dimmable|Warm White|Smart|Solar Powered",
        "light_bulb_type light_bulb_colour light_type lamp_base power_consumption",
        "color wattage",
        (199, 0.8),
        "w",
        extras="Pack of 5|Outdoor|Indoor",
    ),
    "furniture": _kind(
        "home",
        "Office Chair|Study Table|Monobloc Chair|Sofa Bed|Bed Frame|Cabinet|Shoe Cabinet",
        "Ergonomic|Foldable|Heavy Duty|Wooden|Nordic|Modern|Space Saving",
        "furniture_material assembly_required room_type weight_capacity",
        "color variation",
        (2299, 0.75),
        extras="DIY|with Wheels|Ready to Assemble",
    ),
    "bath": _kind(
        "home",
        "Shower Head|Bath Towel|Bath Mat|Soap Dispenser|Toilet Brush|Bidet Spray",
        "High Pressure|Absorbent|Quick Dry|Anti Slip|Stainless|Wall Mounted",
        "bath_type towel_size material",
        "color variation",
        (199, 0.7),
        extras="Set of 2|Hotel Quality",
    ),
    "garden": _kind(
        "home",
        "Plant Pot|Garden Hose|Seeds|Garden Tools Set|Fertilizer|Sprinkler",
        "Heavy Duty|Expandable|Organic|Self Watering|Ceramic|Durable",
        "garden_type seed_type plant_type material",
        "variation",
        (179, 0.8),
        "m",
        extras="Set|Pack of 10",
    ),
    # Appliances
    "small_kitchen": _kind(
        "appliance",
        "Air Fryer|Rice Cooker|Electric Kettle|Blender|Oven Toaster|Induction Cooker",
        "Digital|Non Stick|Stainless|Multi Function|Large Capacity|Smart|Portable",
        "kitchen_appliance_type air_fryer_capacity appliance_capacity blender_type "
        "power_consumption input_voltage plug_type warranty_period",
        "color variation",
        (1499, 0.6),
        "l w",
        extras="with Free Gift|1 Year Warranty",
    ),
    "fan": _kind(
        "appliance",
        "Stand Fan|Desk Fan|Electric Fan|Wall Fan|Rechargeable Fan|Air Cooler|Neck Fan",
        "Rechargeable|Portable|Silent|Remote Control|Bladeless|Heavy Duty|Mini",
        "fan_type fan_features number_of_speeds power_consumption plug_type",
        "color variation",
        (899, 0.7),
        "inch w",
        extras="16 Inch|USB|with Timer",
    ),
    "large_appliance": _kind(
        "appliance",
        "Aircon|Window Type Aircon|Refrigerator|Washing Machine|Chest Freezer",
        "Inverter|Energy Saving|Smart|Twin Tub|Fully Automatic|Split Type|No Frost",
        "cooling_capacity energy_rating appliance_capacity input_voltage warranty_period",
        "variation",
        (14999, 0.5),
        extras="with Installation|Free Delivery",
    ),
    "cleaning_appliance": _kind(
        "appliance",
        "Vacuum Cleaner|Robot Vacuum|Steam Iron|Garment Steamer|Air Purifier",
        "Cordless|Handheld|Wet and Dry|Powerful|Smart|Portable|HEPA",
        "vacuum_type iron_type cordless power_consumption plug_type warranty_type",
        "color variation",
        (1999, 0.7),
        "w",
        extras="with Free Gift",
    ),
    "tv": _kind(
        "appliance",
        "Smart TV|Android TV|LED TV|TV Box|Projector|Soundbar",
        "4K|Full HD|Frameless|Smart|Netflix Ready|HDR|Portable",
        "screen_size display_type resolution tv_type hdmi_ports refresh_rate warranty_period",
        "inch",
        (9999, 0.8),
        "inch",
        extras="with Free Wall Bracket|2024 Model",
    ),
    # Electronics and computers
    "audio": _kind(
        "electronics",
        "TWS Earbuds|Bluetooth Headphones|Bluetooth Speaker|Wired Earphones|Headset",
        "Wireless|Noise Cancelling|Bass|Waterproof|Gaming|Hifi|Sports|Touch Control",
        "headphone_type headphone_features speaker_type ptb_speaker_features bluetooth_version "
        "connectivity battery_capacity",
        "color",
        (499, 0.85),
        "mah",
        extras="with Mic|for iPhone and Android|Long Battery",
    ),
    "computer_acc": _kind(
        "electronics",
        "Gaming Mouse|Mechanical Keyboard|Mouse Pad|Webcam|USB Hub|Laptop Stand",
        "RGB|Wireless|Silent|Ergonomic|Gaming|Rechargeable|Portable|Adjustable",
        "keyboard_type switch_type mouse_type dpi connectivity gaming_platform",
        "color variation",
        (399, 0.8),
        extras="for PC Laptop|Plug and Play",
    ),
    "storage_dev": _kind(
        "electronics",
        "Flash Drive|SD Card|External Hard Drive|SSD|Micro SD Card",
        "High Speed|Original|Waterproof|Portable|Metal|USB 3.0",
        "storage_capacity_hb connectivity",
        "storage",
        (399, 0.8),
        "gb",
        extras="Class 10|with Adapter",
    ),
    "camera": _kind(
        "electronics",
        "Action Camera|CCTV Camera|WiFi Camera|Dash Cam|Instant Camera|Webcam",
        "HD|4K|Night Vision|Waterproof|Wireless|360|Smart|Outdoor",
        "camera_type megapixels security_camera_feature resolution connectivity lens_mount",
        "variation",
        (1299, 0.8),
        extras="with Memory Card|Indoor Outdoor",
    ),
    "computer": _kind(
        "electronics",
        "Laptop|Desktop PC|Mini PC|Monitor|Gaming Laptop|Printer",
        "Brand New|Lightweight|Gaming|Slim|Business|Refurbished|Curved",
        "processor_type ram_memory storage_capacity_hb operating_system screen_size refresh_rate "
        "printer_type warranty_period",
        "ram",
        (24999, 0.6),
        "gb inch",
        extras="with Free Bag|Windows 11|1 Year Warranty",
    ),
    "network": _kind(
        "electronics",
        "WiFi Router|Pocket WiFi|Range Extender|LAN Cable|Network Switch",
        "Dual Band|High Speed|Unlocked|Long Range|Mesh|Gigabit",
        "network_type router_ports connectivity cable_length",
        "variation",
        (1199, 0.8),
        extras="Openline|Plug and Play",
    ),
    "printer_ink": _kind(
        "electronics",
        "Ink Refill|Toner Cartridge|Printer Ink|Thermal Paper",
        "Compatible|Original|High Yield|Premium|Dye Ink",
        "ink_color printer_type",
        "color quantity",
        (249, 0.6),
        "ml",
        extras="4 Colors Set|70ml",
    ),
    # Mobile
    "phone_case": _kind(
        "mobile",
        "Phone Case|Clear Case|Silicone Case|Magnetic Case|Wallet Case|Shockproof Case",
        "Shockproof|Soft|Clear|Matte|Aesthetic|Cute|Anti Yellow|Korean|Liquid Silicone",
        "case_function phonecase_theme compatible_devices brand_compatibility material",
        "phone_model color",
        (99, 0.55),
        extras="for iPhone|for Samsung|for Oppo Vivo",
    ),
    "screen_protector": _kind(
        "mobile",
        "Tempered Glass|Screen Protector|Hydrogel Film|Privacy Glass|Camera Lens Protector",
        "Full Cover|9H|Anti Spy|Matte|Anti Blue Light|Clear|Bubble Free",
        "screen_protector_type compatible_devices brand_compatibility",
        "phone_model",
        (79, 0.55),
        extras="for iPhone|2pcs|Full Glue",
    ),
    "charger": _kind(
        "mobile",
        "Fast Charger|Charging Cable|Power Bank|Wireless Charger|Car Charger|Adapter",
        "Fast Charging|Original|Braided|Type C|PD|Magnetic|Portable|Durable",
        "cable_type charger_output fast_charging number_of_ports powerbank_capacity "
        "compatible_devices plug_type",
        "length color",
        (249, 0.75),
        "mah w m",
        extras="for iPhone|for Android|Type C to Lightning",
    ),
    "phone": _kind(
        "mobile",
        "Smartphone|Android Phone|Tablet|Keypad Phone|Smart Watch|Fitness Tracker",
        "Brand New|Original|Openline|Dual SIM|Big Battery|5G|Waterproof",
        "phone_storage ram_memory network_mode sim_type operating_system tablet_size "
        "smartwatch_features battery_capacity warranty_period",
        "storage color",
        (6999, 0.8),
        "gb mah",
        extras="with Free Case|Global Version|1 Year Warranty",
    ),
    "phone_holder": _kind(
        "mobile",
        "Phone Holder|Selfie Stick|Tripod|Ring Light|Phone Stand|Stylus Pen",
        "Adjustable|Foldable|Portable|360 Rotation|Bluetooth|Magnetic",
        "mount_type stylus_type compatible_devices",
        "color variation",
        (149, 0.7),
        extras="for Live Selling|for Vlog",
    ),
    # Sports & outdoors
    "fitness": _kind(
        "sports",
        "Yoga Mat|Dumbbell|Resistance Band|Jump Rope|Ab Roller|Pull Up Bar|Kettlebell",
        "Non Slip|Adjustable|Heavy Duty|Thick|Portable|Home Gym|Eco Friendly",
        "fitness_equipment_type dumbbell_weight sports_material activity_type weight_capacity",
        "color variation",
        (399, 0.75),
        "kg",
        extras="for Home Workout|Set",
    ),
    "sportswear": _kind(
        "sports",
        "Jersey|Compression Shirt|Sports Bra|Running Shorts|Leggings|Dri Fit Shirt",
        "Quick Dry|Breathable|Stretchable|Dri Fit|Sublimation|Lightweight",
        "activity_type sport_features clothing_material recommended_gender",
        "color apparel_size",
        (279, 0.55),
        extras="for Men|for Women|Unisex",
    ),
    "racket": _kind(
        "sports",
        "Badminton Racket|Tennis Racket|Pickleball Paddle|Shuttlecock|Table Tennis Set",
        "Lightweight|Carbon|Professional|Full Carbon|Beginner|Durable",
        "racket_sport string_tension sports_material activity_type",
        "color variation",
        (699, 0.8),
        extras="with Bag|2pcs|Set",
    ),
    "bike": _kind(
        "sports",
        "Mountain Bike|Bike Light|Bike Helmet|Bicycle Bell|Inner Tube|Folding Bike",
        "Alloy|Lightweight|Waterproof|Rechargeable|Shimano Compatible|Heavy Duty",
        "bicycle_type bike_part wheel_size sports_material",
        "color variation",
        (899, 1.0),
        extras="26er|27.5|for MTB",
    ),
    "outdoor": _kind(
        "sports",
        "Tent|Sleeping Bag|Camping Chair|Hammock|Cooler|Hiking Backpack|Swimming Goggles",
        "Waterproof|Foldable|Portable|Lightweight|Anti Fog|Outdoor|Large",
        "camping_type tent_capacity swimming_gear activity_type sports_material",
        "color variation",
        (599, 0.85),
        extras="for Camping|for Beach",
    ),
    "balls": _kind(
        "sports",
        "Basketball|Volleyball|Football|Futsal Ball|Ball Pump",
        "Official Size|Indoor Outdoor|Durable|Rubber|Leather|Training",
        "ball_size sports_material activity_type",
        "variation",
        (499, 0.6),
        extras="Size 7|Size 5|with Pump",
    ),
    # Automotive & motorcycles
    "moto_parts": _kind(
        "auto",
        "Brake Pads|Spark Plug|Air Filter|Headlight|Side Mirror|Horn|Chain Set|Disc Brake",
        "Heavy Duty|Original|Racing|Thai Concept|Plug and Play|Stock|Universal",
        "motorcycle_make motorcycle_model component_type auto_light_source_color auto_light_type",
        "variation",
        (299, 0.8),
        extras="for Click|for Nmax|for Mio|for Aerox|for Beat",
    ),
    "helmet": _kind(
        "auto",
        "Full Face Helmet|Half Face Helmet|Modular Helmet|Helmet Visor|Helmet Lock",
        "Dual Visor|ICC Certified|Lightweight|Ventilated|Matte|Glossy",
        "helmet_type helmet_certification material",
        "color apparel_size",
        (1199, 0.7),
        extras="with Free Bag|Unisex",
    ),
    "car_acc": _kind(
        "auto",
        "Seat Cover|Car Floor Mat|Steering Wheel Cover|Car Air Freshener|Car Vacuum|Dash Cam",
        "Universal|Waterproof|Leather|Anti Slip|Premium|Custom Fit",
        "make car_accessory_type fitment material",
        "color variation",
        (499, 0.8),
        extras="for Sedan|for SUV|5 Seater",
    ),
    "car_care": _kind(
        "auto",
        "Car Shampoo|Tire Black|Car Wax|Microfiber Towel|Engine Oil|Coolant",
        "Premium|Fully Synthetic|Concentrated|Scratch Remover|Ceramic|Long Lasting",
        "car_care_type oil_type viscosity packaging_type",
        "volume",
        (299, 0.7),
        "ml l",
        extras="Bundle|1 Liter",
    ),
    "tires": _kind(
        "auto",
        "Motorcycle Tire|Tubeless Tire|Car Tire|Inner Tube|Mags",
        "Tubeless|Heavy Duty|All Terrain|Racing|Thai|High Grip",
        "tire_size motorcycle_make make",
        "variation",
        (1299, 0.8),
        extras="Free Sealant|Free Pito",
    ),
    # Pets
    "pet_food": _kind(
        "pets",
        "Dog Food|Cat Food|Puppy Food|Pet Treats|Wet Cat Food|Dog Treats",
        "Premium|Grain Free|High Protein|Natural|Holistic|Repack|Original",
        "pet_food_type animal_type dog_life_stage cat_life_stage flavor",
        "weight",
        (349, 0.9),
        "g kg",
        extras="Repacked|1kg|Sack",
    ),
    "pet_acc": _kind(
        "pets",
        "Dog Collar|Leash|Pet Bed|Cat Litter|Cat Scratcher|Pet Carrier|Pet Bowl",
        "Adjustable|Durable|Washable|Foldable|Cute|Soft|Reflective",
        "pet_accessory_type litter_type animal_type material",
        "color apparel_size",
        (199, 0.8),
        extras="for Dogs|for Cats|Small to Large",
    ),
    "pet_care": _kind(
        "pets",
        "Dog Shampoo|Pet Wipes|Tick and Flea Spray|Pet Vitamins|Grooming Brush",
        "Anti Tick|Gentle|Natural|Fresh Scent|Organic|Antibacterial",
        "dog_shampoos_&_bath_accessories_type animal_type product_form",
        "scent",
        (179, 0.7),
        "ml",
        extras="for Dogs|for Cats|250ml",
    ),
    # Office, school, books
    "stationery": _kind(
        "office",
        "Gel Pen|Ballpen|Highlighter|Notebook|Sticky Notes|Pencil Case|Planner",
        "Aesthetic|Cute|Korean|Pastel|Quick Dry|Smooth|Refillable",
        "stationery_pen_type stationery_line_point stationery_notebook_type number_of_pages "
        "paper_size school_supply_type",
        "color quantity",
        (89, 0.7),
        extras="12pcs|Set of 6|School Supplies",
    ),
    "art": _kind(
        "office",
        "Watercolor Set|Acrylic Paint|Colored Pencils|Sketch Pad|Paint Brush Set|Crochet Kit",
        "Professional|Non Toxic|Vibrant|Student|Beginner|Premium",
        "art_supply_type craft_type knitting_tools number_of_pieces paper_size",
        "quantity",
        (249, 0.75),
        extras="24 Colors|48 Colors|Set",
    ),
    "office_supply": _kind(
        "office",
        "Bond Paper|Stapler|Folder|Packing Tape|Calculator|Label Maker|Whiteboard",
        "Heavy Duty|Long|Short|A4|Premium|Durable",
        "office_supply_type paper_size tape_type",
        "quantity variation",
        (199, 0.7),
        extras="1 Ream|Box of 10",
    ),
    "books": _kind(
        "office",
        "Book|Coloring Book|Activity Book|Novel|Workbook|Bible",
        "Bestseller|Brand New|Educational|Illustrated|Paperback|Hardbound",
        "book_genre language number_of_pages recommended_age",
        "variation",
        (299, 0.6),
        extras="for Kids|Tagalog Edition",
    ),
    # Tools & home improvement
    "power_tools": _kind(
        "tools",
        "Cordless Drill|Angle Grinder|Impact Drill|Jigsaw|Heat Gun|Welding Machine",
        "Heavy Duty|Cordless|Brushless|Industrial|Rechargeable|Professional",
        "power_tool_type power_tool_material_uses power_tool_welder_type cordless "
        "power_consumption input_voltage warranty_period",
        "variation",
        (1799, 0.7),
        "w",
        extras="with 2 Batteries|with Case|Set",
    ),
    "hand_tools": _kind(
        "tools",
        "Screwdriver Set|Wrench Set|Pliers|Hammer|Tape Measure|Socket Wrench|Allen Key",
        "Heavy Duty|Stainless|Magnetic|Multi Purpose|Chrome Vanadium|Japan Quality",
        "hand_tool_type tool_set material tool_type_of_accessories set_pieces",
        "variation",
        (349, 0.8),
        extras="40pcs Set|with Case",
    ),
    "electrical": _kind(
        "tools",
        "Extension Cord|Smart Plug|Circuit Breaker|Electrical Tape|Wall Switch|Outlet",
        "Heavy Duty|Universal|Surge Protected|WiFi|Fireproof|Multi Outlet",
        "electrical_type plug_type input_voltage cable_length",
        "length",
        (299, 0.8),
        "m",
        extras="3 Gang|4 Gang|with USB",
    ),
    "hardware": _kind(
        "tools",
        "Faucet|Door Lock|Padlock|Paint|Sealant|Work Gloves|Safety Goggles|PVC Pipe",
        "Stainless|Heavy Duty|Waterproof|Anti Rust|Quick Dry|Digital",
        "plumbing_type door_security_type paint_finish paint_adhesive_glue safety_gear",
        "color variation",
        (399, 0.9),
        "l",
        extras="1 Liter|Set|with Keys",
    ),
}

# --------------------------------------------------------------------------------------------------------
# Category tree: every leaf path (2-6 levels) with the kind it sells.
# --------------------------------------------------------------------------------------------------------

_LEAF_TEXT = """
Women's Clothing > Tops > Blouses | w_top
Women's Clothing > Tops > T-Shirts | w_top
Women's Clothing > Tops > Crop Tops & Tank Tops | w_top
Women's Clothing > Dresses | w_dress
Women's Clothing > Dresses > Maxi Dresses | w_dress
Women's Clothing > Pants & Leggings > Jeans | w_bottom
Women's Clothing > Skirts | w_bottom
Women's Clothing > Shorts | w_bottom
Women's Clothing > Lingerie, Sleep & Lounge > Bras > Wireless Bras | w_inner
Women's Clothing > Lingerie, Sleep & Lounge > Panties | w_inner
Women's Clothing > Lingerie, Sleep & Lounge > Sleepwear & Robes | w_inner
Men's Clothing > T-Shirts & Tanks | m_top
Men's Clothing > Shirts & Polo > Polo Shirts | m_top
Men's Clothing > Hoodies & Sweatshirts | m_top
Men's Clothing > Jackets & Coats | m_top
Men's Clothing > Pants > Cargo | m_bottom
Men's Clothing > Jeans | m_bottom
Men's Clothing > Shorts | m_bottom
Men's Clothing > Underwear > Briefs | m_inner
Men's Clothing > Underwear > Boxers | m_inner
Men's Clothing > Socks | m_inner
Mother & Baby > Clothing & Accessories > Rompers | kids_wear
Mother & Baby > Clothing & Accessories > Kids Sets | kids_wear
Shoes > Women's Shoes > Sneakers | sneakers
Shoes > Men's Shoes > Sneakers | sneakers
Shoes > Men's Shoes > Sports Shoes > Running Shoes | sneakers
Shoes > Women's Shoes > Flat Sandals | sandals
Shoes > Men's Shoes > Slippers & Flip Flops | sandals
Shoes > Women's Shoes > Heels > Block Heels | heels
Shoes > Women's Shoes > Flats | heels
Bags and Travel > Women Bags > Cross Body & Shoulder Bags | bag
Bags and Travel > Women Bags > Tote Bags | bag
Bags and Travel > Men Bags > Backpacks | bag
Bags and Travel > Laptop Bags | bag
Bags and Travel > Wallets & Accessories > Wallets | wallet
Bags and Travel > Wallets & Accessories > Card Holders | wallet
Bags and Travel > Luggage & Suitcases > Hard Case | luggage
Bags and Travel > Travel Bags | luggage
Watches Sunglasses Jewellery > Watches > Men's Watches > Casual | watch
Watches Sunglasses Jewellery > Watches > Women's Watches | watch
Watches Sunglasses Jewellery > Jewellery > Necklaces | jewelry
Watches Sunglasses Jewellery > Jewellery > Earrings > Studs | jewelry
Watches Sunglasses Jewellery > Jewellery > Rings | jewelry
Watches Sunglasses Jewellery > Eyewear > Sunglasses | eyewear
Watches Sunglasses Jewellery > Eyewear > Eyeglasses | eyewear
Fashion Accessories > Hair Accessories > Clips & Pins | hair_acc
Fashion Accessories > Hair Accessories > Headbands | hair_acc
Health & Beauty > Skin Care > Serum & Essence | skincare
Health & Beauty > Skin Care > Moisturizers and Cream | skincare
Health & Beauty > Skin Care > Face Mask & Packs > Sheet Masks | skincare
Health & Beauty > Skin Care > Sunscreen | skincare
Health & Beauty > Makeup > Lips > Lipstick | makeup
Health & Beauty > Makeup > Lips > Lip Tint | makeup
Health & Beauty > Makeup > Face > Foundation | makeup
Health & Beauty > Makeup > Eyes > Mascara | makeup
Health & Beauty > Bath & Body > Body Soaps & Shower Gels | bodycare
Health & Beauty > Bath & Body > Body Moisturizers > Lotions | bodycare
Health & Beauty > Bath & Body > Deodorants | bodycare
Health & Beauty > Hair Care > Shampoo | haircare
Health & Beauty > Hair Care > Hair Treatments | haircare
Health & Beauty > Hair Care > Hair Coloring | haircare
Health & Beauty > Fragrances > Women Fragrances | fragrance
Health & Beauty > Fragrances > Men Fragrances | fragrance
Health & Beauty > Hands & Nails > Nail Polish | nails
Health & Beauty > Hands & Nails > Nail Art & Tools | nails
Health & Beauty > Men's Care > Shavers & Trimmers | grooming
Health & Beauty > Beauty Tools > Hair Styling Appliances > Straighteners | grooming
Health & Beauty > Food Supplements > Beauty Supplements > Collagen | vitamins
Health & Beauty > Food Supplements > Well Being > Multivitamins | vitamins
Health & Beauty > Medical Supplies > Face Masks | medical
Health & Beauty > Medical Supplies > Health Monitors & Tests > Thermometers | medical
Health & Beauty > Personal Care > Oral Care > Toothbrushes | oral
Health & Beauty > Personal Care > Oral Care > Toothpaste | oral
Mother & Baby > Diapering & Potty > Disposable Diapers | diaper
Mother & Baby > Diapering & Potty > Wipes | diaper
Mother & Baby > Feeding > Bottle-feeding > Bottles | feeding
Mother & Baby > Feeding > Utensils | feeding
Mother & Baby > Baby Gear > Strollers | baby_gear
Mother & Baby > Baby Gear > Walkers | baby_gear
Toys & Games > Blocks & Building Toys | toys
Toys & Games > Dolls & Accessories | toys
Toys & Games > Remote Control & Vehicles > RC Cars | toys
Toys & Games > Stuffed Toys | toys
Toys & Games > Learning & Education > Puzzles | toys
Groceries > Snacks & Sweets > Chips & Crisps | snacks
Groceries > Snacks & Sweets > Chocolate | snacks
Groceries > Snacks & Sweets > Biscuits & Cookies | snacks
Groceries > Beverages > Coffee > Instant Coffee | beverage
Groceries > Beverages > Tea | beverage
Groceries > Beverages > Powdered Drink Mixes | beverage
Groceries > Food Staples > Rice | pantry
Groceries > Food Staples > Noodles & Pasta > Instant Noodles | pantry
Groceries > Food Staples > Canned Food | pantry
Groceries > Food Staples > Cooking Ingredients > Sauces & Condiments | pantry
Home & Living > Bedding > Bedsheets | bedding
Home & Living > Bedding > Pillows & Bolsters | bedding
Home & Living > Bedding > Comforters, Quilts & Duvets | bedding
Home & Living > Home Decor > Curtains & Blinds > Blackout Curtains | curtain
Home & Living > Bath > Shower Curtains | curtain
Home & Living > Kitchen & Dining > Cookware > Pots & Pans > Frying Pans | cookware
Home & Living > Kitchen & Dining > Cookware > Pots & Pans > Casseroles > Stainless Casseroles | cookware
Home & Living > Kitchen & Dining > Cookware > Cookware Sets | cookware
Home & Living > Kitchen & Dining > Kitchen Utensils | kitchen_tools
Home & Living > Kitchen & Dining > Food Storage > Containers | kitchen_tools
Home & Living > Kitchen & Dining > Drinkware > Tumblers | kitchen_tools
Home & Living > Storage & Organisation > Storage Boxes | storage
Home & Living > Storage & Organisation > Shoe Storage | storage
Home & Living > Storage & Organisation > Laundry > Hangers | storage
Home & Living > Laundry & Cleaning > Cleaning Tools > Mops | cleaning
Home & Living > Laundry & Cleaning > Laundry > Detergent | cleaning
Home & Living > Laundry & Cleaning > Trash Bags | cleaning
Home & Living > Home Decor > Clocks | decor
Home & Living > Home Decor > Artificial Flowers | decor
Home & Living > Home Decor > Candles & Candleholders > Scented Candles | decor
Home & Living > Lighting > Light Bulbs > LED Bulbs | lighting
Home & Living > Lighting > Outdoor Lighting > Solar Lights | lighting
Home & Living > Lighting > Lamps > Desk Lamps | lighting
Home & Living > Furniture > Living Room Furniture > Sofas | furniture
Home & Living > Furniture > Home Office > Office Chairs | furniture
Home & Living > Furniture > Bedroom Furniture > Bed Frames | furniture
Home & Living > Bath > Bath Towels | bath
Home & Living > Bath > Bathroom Accessories > Shower Heads | bath
Home & Living > Outdoor & Garden > Gardening > Pots & Planters | garden
Home & Living > Outdoor & Garden > Gardening > Seeds & Bulbs | garden
Home Appliances > Small Kitchen Appliances > Air Fryers | small_kitchen
Home Appliances > Small Kitchen Appliances > Rice Cookers | small_kitchen
Home Appliances > Small Kitchen Appliances > Electric Kettles | small_kitchen
Home Appliances > Small Kitchen Appliances > Blenders, Mixers & Grinders > Blenders | small_kitchen
Home Appliances > Cooling & Air Treatment > Fans > Stand Fans | fan
Home Appliances > Cooling & Air Treatment > Fans > Rechargeable Fans | fan
Home Appliances > Cooling & Air Treatment > Air Conditioners > Window Type | large_appliance
Home Appliances > Large Appliances > Refrigerators | large_appliance
Home Appliances > Large Appliances > Washing Machines > Twin Tub | large_appliance
Home Appliances > Vacuums & Floor Care > Vacuum Cleaners | cleaning_appliance
Home Appliances > Garment Care > Irons | cleaning_appliance
TV, Audio / Video, Gaming & Wearables > Televisions > Smart Televisions | tv
TV, Audio / Video, Gaming & Wearables > Home Audio > Soundbars | tv
TV, Audio / Video, Gaming & Wearables > TV Accessories & Media Players > TV Boxes | tv
Electronic Accessories > Audio > Headphones & Headsets > Wireless Earbuds | audio
Electronic Accessories > Audio > Portable Speakers | audio
Electronic Accessories > Audio > Headphones & Headsets > In-Ear Headphones | audio
Electronic Accessories > Computer Accessories > Mice > Gaming Mice | computer_acc
Electronic Accessories > Computer Accessories > Keyboards | computer_acc
Electronic Accessories > Computer Accessories > Laptop Stands | computer_acc
Electronic Accessories > Storage > Flash Drives | storage_dev
Electronic Accessories > Storage > Memory Cards > Micro SD | storage_dev
Electronic Devices > Cameras & Drones > Security Cameras > IP Cameras | camera
Electronic Devices > Cameras & Drones > Action Cameras | camera
Electronic Devices > Cameras & Drones > Car Cameras | camera
Electronic Devices > Laptops > Traditional Laptops | computer
Electronic Devices > Laptops > Gaming Laptops | computer
Electronic Devices > Desktop Computers & Monitors > Monitors | computer
Electronic Devices > Printers > Ink Tank Printers | computer
Electronic Accessories > Network Components > Routers | network
Electronic Accessories > Network Components > Pocket WiFi | network
Electronic Accessories > Printer Accessories > Ink | printer_ink
Mobiles & Tablets > Mobile Accessories > Phone Cases | phone_case
Mobiles & Tablets > Mobile Accessories > Phone Cases > Silicone Cases | phone_case
Mobiles & Tablets > Mobile Accessories > Screen Protectors > Tempered Glass | screen_protector
Mobiles & Tablets > Mobile Accessories > Chargers & Cables > Cables | charger
Mobiles & Tablets > Mobile Accessories > Chargers & Cables > Wall Chargers | charger
Mobiles & Tablets > Mobile Accessories > Power Banks | charger
Mobiles & Tablets > Mobile Accessories > Car Chargers | charger
Mobiles & Tablets > Mobile Phones | phone
Mobiles & Tablets > Tablets | phone
Mobiles & Tablets > Smartwatches & Fitness Trackers | phone
Mobiles & Tablets > Mobile Accessories > Phone Holders & Stands > Selfie Sticks | phone_holder
Mobiles & Tablets > Mobile Accessories > Phone Holders & Stands | phone_holder
Sports & Lifestyle > Exercise & Fitness > Weight Training > Dumbbells | fitness
Sports & Lifestyle > Exercise & Fitness > Yoga > Yoga Mats | fitness
Sports & Lifestyle > Exercise & Fitness > Fitness Accessories | fitness
Sports & Lifestyle > Sports Clothing > Men's Sports Clothing > Jerseys | sportswear
Sports & Lifestyle > Sports Clothing > Women's Sports Clothing | sportswear
Sports & Lifestyle > Racket Sports > Badminton > Rackets | racket
Sports & Lifestyle > Racket Sports > Pickleball | racket
Sports & Lifestyle > Cycling > Bikes > Mountain Bikes | bike
Sports & Lifestyle > Cycling > Cycling Accessories > Bike Lights | bike
Sports & Lifestyle > Outdoor Recreation > Camping & Hiking > Tents | outdoor
Sports & Lifestyle > Outdoor Recreation > Water Sports > Swimming Goggles | outdoor
Sports & Lifestyle > Team Sports > Basketball > Balls | balls
Sports & Lifestyle > Team Sports > Volleyball | balls
Motors > Motorcycle > Motorcycle Parts & Spares > Brakes | moto_parts
Motors > Motorcycle > Motorcycle Parts & Spares > Lighting > Headlights | moto_parts
Motors > Motorcycle > Motorcycle Parts & Spares > Engine Parts > Spark Plugs | moto_parts
Motors > Motorcycle > Riding Gear > Helmets > Full Face | helmet
Motors > Motorcycle > Riding Gear > Helmets > Half Face | helmet
Motors > Automotive > Interior Accessories > Seat Covers | car_acc
Motors > Automotive > Interior Accessories > Floor Mats | car_acc
Motors > Automotive > Car Electronics > Dash Cams | car_acc
Motors > Automotive > Car Care > Cleaning Kits > Car Shampoo | car_care
Motors > Automotive > Oils & Fluids > Engine Oil | car_care
Motors > Motorcycle > Tires & Wheels > Tubeless Tires | tires
Motors > Automotive > Tires & Wheels | tires
Pet Supplies > Dog > Dog Food > Dry Food | pet_food
Pet Supplies > Cat > Cat Food > Wet Food | pet_food
Pet Supplies > Dog > Treats | pet_food
Pet Supplies > Dog > Leashes, Collars & Muzzles | pet_acc
Pet Supplies > Cat > Litter & Toilet | pet_acc
Pet Supplies > Cat > Beds, Mats & Houses | pet_acc
Pet Supplies > Dog > Grooming > Shampoos & Conditioners | pet_care
Pet Supplies > Pet Health > Flea & Tick Control | pet_care
Stationery & Craft > School & Office Supplies > Writing & Correction > Pens | stationery
Stationery & Craft > School & Office Supplies > Notebooks & Notepads | stationery
Stationery & Craft > Art Supplies > Painting > Watercolor | art
Stationery & Craft > Art Supplies > Drawing > Colored Pencils | art
Stationery & Craft > Craft Supplies > Knitting & Crochet | art
Stationery & Craft > School & Office Supplies > Paper Products > Bond Paper | office_supply
Stationery & Craft > School & Office Supplies > Office Equipment > Calculators | office_supply
Stationery & Craft > Books > Children's Books | books
Stationery & Craft > Books > Fiction | books
Home Improvement > Power Tools > Drills | power_tools
Home Improvement > Power Tools > Grinders | power_tools
Home Improvement > Power Tools > Welding Machines | power_tools
Home Improvement > Hand Tools > Tool Sets | hand_tools
Home Improvement > Hand Tools > Pliers & Wrenches | hand_tools
Home Improvement > Electrical > Extension Cords | electrical
Home Improvement > Electrical > Switches & Outlets | electrical
Home Improvement > Security > Door Locks | hardware
Home Improvement > Paint & Wall Treatments > Paint | hardware
Home Improvement > Plumbing > Faucets | hardware
Home Improvement > Safety > Work Gloves | hardware
"""


def _parse_leaves(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for line in text.strip().splitlines():
        path, _, kind = line.rpartition("|")
        out.append((path.strip(), kind.strip()))
    return tuple(out)


#: (category path, kind name) for every leaf of the synthetic tree.
LEAVES: tuple[tuple[str, str], ...] = _parse_leaves(_LEAF_TEXT)

# --------------------------------------------------------------------------------------------------------
# Names and title noise.
# --------------------------------------------------------------------------------------------------------

#: Syllables for invented brand names ("Kavora", "Zenlio", ...).
BRAND_HEADS: tuple[str, ...] = _split(
    "ka|ze|mo|lu|vi|ta|ri|no|sa|be|do|fi|ga|ha|ji|ko|la|ma|ne|pi|qu|ro|si|tu|va|wi|xa|yo|zu|bri|cla|dra|"
    "fle|glo|kre|pla|sto|tra|vro|chi|sha|thu"
)
BRAND_MIDS: tuple[str, ...] = _split("ra|li|no|ve|ta|mi|ko|sa|lo|re|ni|xo|da|zi|po|me|ru|the|va|ki")
BRAND_TAILS: tuple[str, ...] = _split(
    "x|n|ra|lio|ni|ta|vo|za|on|ex|ix|us|ia|ora|ela|ino|ar|el|um|ie|io|ax|ko|sy|ly"
)
BRAND_SUFFIXES: tuple[str, ...] = _split(
    "PH|Home|Tech|Beauty|Living|Manila|Official|Lab|Co.|Essentials|Store|Pro|Kids|Gear|Mart|Cebu|Life"
)

#: Syllables for invented product-line names ("Velkora 3", "Tazumi", ...): real titles carry series and
#: model names ("Redmi Note", "Air Max") that make a few title words single out one product among millions.
LINE_ONSETS: tuple[str, ...] = _split("b|d|f|g|h|k|l|m|n|p|r|s|t|v|z|br|dr|gr|kr|pr|tr|st|sh|ch|gl")
LINE_VOWELS: tuple[str, ...] = _split("a|e|i|o|u|ai|ou")
LINE_CODAS: tuple[str, ...] = _split("n|r|x|s|l|k|m|t")
LINE_MARKS: tuple[str, ...] = _split("2|3|4|5|7|8|9|X|S|SE|Neo|Air|One|Go|II|III")

SHOP_WORDS: tuple[str, ...] = _split(
    "Mall|Shop|Store|Trading|Enterprises|Online Shop|PH|Outlet|Hub|Depot|Boutique|Express|Corner|Emporium"
)

#: Title prefixes shops like to add (kept per shop so that a shop's listings look alike).
TITLE_PREFIXES: tuple[str, ...] = (
    "2024 New",
    "COD",
    "【COD】",
    "Free Shipping",
    "Original",
    "✅Original",
    "[Ready Stock]",
    "Hot Sale",
    "Sale!",
    "Authentic",
    "Best Seller",
    "Local Seller",
    "Manila Stock",
    "Legit",
    "100% Original",
    "BUY 1 TAKE 1",
    "Same Day Delivery",
    "NEW ARRIVAL",
    "ON HAND",
    "Flash Sale",
    "Mura!",
    "Sulit",
    "2023 New",
    "Fast Delivery",
    "Lowest Price",
    "🔥Hot🔥",
    "Ready Stock",
    "Wholesale",
)
TITLE_SUFFIXES: tuple[str, ...] = (
    "COD",
    "Free Shipping",
    "Good Quality",
    "High Quality",
    "Cheap",
    "Best Price",
    "Legit",
    "COD✅",
    "Sulit",
    "Pasalubong",
    "Ready Stock",
    "Gift Idea",
    "Fast Ship",
    "Limited Stock",
    "New Arrival",
    "Best Seller",
    "Pang Regalo",
    "Wholesale Price",
)
PACK_FORMATS: tuple[str, ...] = (
    "1pc",
    "2pcs",
    "3 PCS",
    "5pcs",
    "10pcs",
    "Set of 4",
    "12pcs/set",
    "(Pack of 6)",
    "2 in 1",
    "3in1",
    "Bundle of 3",
    "x2",
    "1 Set",
    "Buy 1 Take 1",
    "20 pcs",
)
SEPARATORS: tuple[str, ...] = (" ", " ", " ", " ", " | ", " - ", ", ", " / ", " ~ ", " ")

# --------------------------------------------------------------------------------------------------------
# Text templates (descriptions are invented boilerplate, shop-style).
# --------------------------------------------------------------------------------------------------------

SHORT_BULLETS: tuple[str, ...] = (
    "High quality {noun}",
    "Made of durable {material}",
    "100% brand new and high quality",
    "Perfect for daily use",
    "Easy to use and clean",
    "Great gift for family and friends",
    "Lightweight and portable",
    "{adj} design",
    "Package includes: 1 x {noun}",
    "Ships from Metro Manila",
    "Cash on delivery available",
    "Please allow 1-3cm difference due to manual measurement",
    "Color may vary slightly due to lighting",
    "Ready stock, ships within 24 hours",
)
DESCRIPTION_SENTENCES: tuple[str, ...] = (
    "Welcome to our shop! All items are ready stock.",
    "This {noun} is made with premium {material} for long lasting use.",
    "The {adj} style fits any occasion and matches your daily look.",
    "Suitable for home, office, school and travel.",
    "Please check the size chart before placing your order.",
    "Kindly message us for bulk orders and reseller prices.",
    "We ship nationwide via J&T and LBC, usually within 1-2 days.",
    "Item is checked before shipping; please take an unboxing video for returns.",
    "Features: {adj}, durable, easy to clean.",
    "Specifications may change without prior notice.",
    "Follow our store for more new arrivals and vouchers!",
    "Real photos taken by the seller.",
    "Satisfaction guaranteed or your money back within 7 days.",
    "Note: due to monitor settings, color may differ slightly.",
)

IMAGE_HOSTS: tuple[str, ...] = (
    "https://ph-live.slatic.net/p/",
    "https://ph-test-11.slatic.net/p/",
    "https://filebroker-cdn.lazada.com.ph/kf/",
)
